//go:build unix && !ptyplex_inputquiet

package ptyhost

// forceQuietInput is false in every real build; see
// inputwait_forcequiet.go.
const forceQuietInput = false
