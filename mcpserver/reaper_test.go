//go:build unix

package mcpserver_test

// reaperEnv makes the test binary run as runReaper (pidreuse_test.go,
// the init of a pid namespace of its own)
// instead of the tests.
const reaperEnv = "PTYPLEX_TEST_REAPER"
