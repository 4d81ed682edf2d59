//go:build unix && race

package hosttest

// RaceEnabled says the tests run under the race detector (and so the
// binaries they build are built with it).
const RaceEnabled = true
