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
// then waited for sysmon to take a P back. A keystroke echo beside 64
// flooding terminals spent a median 19 ms between the child's echo and its
// reader waking (59 ms with one P, 10 ms with four). Measured with make
// bench on a 2-core VM under load, ratio to plain PTY reads, 2 Ps → 4 Ps:
// 16 terminals raw 0.77–0.80 → 0.87–0.92, 64 raw 0.71–0.83 → 0.84–0.93,
// 64 cooked 0.71–0.75 → 0.83–0.93, echo p99 beside 64 floods against a
// directly driven PTY 1.65 → 0.82, one terminal unchanged within noise.
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
