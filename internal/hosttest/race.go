//go:build unix && race

package hosttest

const raceEnabled = true
