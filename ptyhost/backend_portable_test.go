//go:build darwin || freebsd || (linux && ptyplex_portable)

package ptyhost

const wantBackend = "portable"
