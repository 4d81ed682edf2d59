//go:build linux && !ptyplex_portable

package ptyhost

const wantBackend = "linux"
