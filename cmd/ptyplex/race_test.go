//go:build unix && race

package main

// raceEnabled makes TestMain build the binary under test with -race too,
// so races in the daemon process fail the tests, not just races in here.
const raceEnabled = true
