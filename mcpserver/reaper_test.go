package mcpserver_test

// reaperEnv makes the test binary run as runReaper (pidreuse_test.go)
// instead of the tests.
const reaperEnv = "PTYPLEX_TEST_REAPER"
