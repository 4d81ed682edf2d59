//go:build unix && !linux

package mcpserver_test

// runReaper is only needed by the pid reuse test, which chooses pids with
// Linux's ns_last_pid.
func runReaper(args []string) int { return 1 }
