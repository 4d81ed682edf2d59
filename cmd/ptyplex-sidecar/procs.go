package main

import (
	"os"
	"runtime"
)

// sizeProcs gives the Go runtime twice as many Ps as it would take by
// default (the CPUs it may use), unless GOMAXPROCS says otherwise.
//
// Why more Ps than CPUs: the sidecar's goroutines spend most of their time
// in system calls that wait inside the kernel while keeping their P. A PTY
// read that finds the line discipline empty waits for the tty flush worker
// (n_tty_read → flush_work), and a frame written to a full stdout pipe waits
// for the host. With one P per CPU, both Ps of a 2-core machine were often
// parked in such calls; runnable goroutines, the network poller among them,
// then waited for sysmon to take a P back. Of 1, 1× and 2× the CPUs, 2× has
// the best worst row of the six that make procs measures: the table is in
// docs/performance.md, "How many Ps: measured".
//
// Earlier versions forced one P, because every OUTPUT frame was handed
// from the terminal's reader to a writer goroutine and each hand-off woke
// another thread. A reader now writes its frame itself whenever the output
// stream is free (sidecar/writer.go), so a lone flooding terminal makes no
// hand-offs at all. Hosts that want the sidecar on fewer CPUs set
// GOMAXPROCS.
func sizeProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2 * runtime.GOMAXPROCS(0))
	}
}
