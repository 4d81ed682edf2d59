// Package record reads and writes frame fixtures: a file holding every
// frame of one sidecar session, in both directions, each stamped with the
// monotonic time since the recording began. `ptyplex-sidecar --record FILE`
// writes them; the replay package feeds them back to a fresh sidecar.
//
// The file format is described in PROTOCOL.md ("Frame fixtures").
package record
