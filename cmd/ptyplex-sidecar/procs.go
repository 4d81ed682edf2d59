package main

// The sidecar runs with the Go runtime's default GOMAXPROCS (the CPUs it may
// use). Earlier versions forced one P: every OUTPUT frame used to pass from
// the terminal's reader to a writer goroutine, and with more Ps each hand-off
// woke another thread, which cost more than the second CPU gave back for a
// single terminal. Since a reader now writes its frame itself whenever the
// output stream is free (sidecar/writer.go), a lone flooding terminal makes
// no hand-offs at all, and many terminals get the PTY reads spread over
// every CPU: on a 2-core VM, 16 flooding terminals went from 0.57 to 0.85 of
// plain PTY reads with one terminal unchanged (make bench). Hosts that want
// the sidecar on fewer CPUs set GOMAXPROCS.
