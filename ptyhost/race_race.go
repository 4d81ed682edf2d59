//go:build race

package ptyhost

// raceWrote tells the race detector that this goroutine just wrote b, as
// a read(2) outside unix.Read (quickRead) did without its knowing: the
// same bytes written again, so that a race on them still shows.
func raceWrote(b []byte) { copy(b, b) }
