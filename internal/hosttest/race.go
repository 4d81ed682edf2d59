//go:build race

package hosttest

const raceEnabled = true
