package main

import (
	"fmt"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
	"github.com/ptyplex/ptyplex/replay"
)

func ptr[T any](v T) *T { return &v }

var scenarios = []scenario{
	{
		name:  "echo-round-trip",
		about: "cat echoes a line (tty echo + cat's copy), then ^D ends it",
		run: func(h *host) {
			h.open(proto.Open{TerminalID: "echo", Cmd: "cat"})
			h.waitControl("echo", proto.TypeOpened, 1)
			h.input("echo", "hello, ptyplex\n")
			h.waitOutput("echo", "hello, ptyplex\r\nhello, ptyplex\r\n")
			h.input("echo", "\x04")
			h.waitControl("echo", proto.TypeExit, 1)
		},
	},
	{
		name:  "exit-codes",
		about: "children exiting with 0, 1, 3 and 255",
		run: func(h *host) {
			h.sh("zero", "exit 0")
			h.open(proto.Open{TerminalID: "false", Cmd: "false"})
			h.sh("three", "echo three; exit 3")
			h.sh("max", "exit 255")
			for _, id := range []string{"zero", "false", "three", "max"} {
				h.waitControl(id, proto.TypeExit, 1)
			}
		},
	},
	{
		name:  "signal-death",
		about: "children killed by SIGKILL and SIGTERM: exitCode 128+N plus signal",
		run: func(h *host) {
			h.sh("kill", "kill -KILL $$")
			h.sh("term", "echo bye; kill -TERM $$")
			h.waitControl("kill", proto.TypeExit, 1)
			h.waitControl("term", proto.TypeExit, 1)
		},
	},
	{
		name:  "duplicate-id",
		about: "OPEN of a live id is refused without harming it; the id is reusable after EXIT",
		run: func(h *host) {
			h.open(proto.Open{TerminalID: "dup", Cmd: "cat"})
			h.waitControl("dup", proto.TypeOpened, 1)
			h.sh("dup", "echo impostor")
			h.waitControl("dup", proto.TypeError, 1)
			h.input("dup", "still the first\n")
			h.waitOutput("dup", "still the first\r\nstill the first\r\n")
			h.send(h.s.SendJSON(proto.TypeClose, proto.Close{TerminalID: "dup"}))
			h.waitControl("dup", proto.TypeExit, 1)
			h.sh("dup", "echo second life")
			h.waitControl("dup", proto.TypeExit, 2)
		},
	},
	{
		name:  "bad-cwd",
		about: "OPEN with a missing working directory or program is refused with ERROR",
		run: func(h *host) {
			h.open(proto.Open{TerminalID: "nowhere", Cmd: "/bin/sh", Cwd: ptr("/nonexistent/ptyplex-fixture")})
			h.open(proto.Open{TerminalID: "notadir", Cmd: "/bin/sh", Cwd: ptr("/etc/hostname")})
			h.open(proto.Open{TerminalID: "noprog", Cmd: "/nonexistent/program"})
			h.open(proto.Open{TerminalID: "fine", Cmd: "/bin/pwd", Cwd: ptr("/")})
			for _, id := range []string{"nowhere", "notadir", "noprog"} {
				h.waitControl(id, proto.TypeError, 1)
			}
			h.waitControl("fine", proto.TypeExit, 1)
		},
	},
	{
		name:  "malformed-open",
		about: "malformed OPENs fail alone (ERROR when the id is recoverable, silence when not)",
		run: func(h *host) {
			bad := []string{
				`{"terminalId":"nocmd","cols":80,"rows":24}`,
				`{"terminalId":"wide","cols":70000,"rows":24,"cmd":"true"}`,
				`{"terminalId":"trailing","cols":80,"rows":24,"cmd":"true"} {}`,
				`{"cols":80,"rows":24,"cmd":"true"`, // no id to answer to
				`{"terminalId":"cut","cols":80,"rows":`,
			}
			for _, b := range bad {
				h.send(h.s.SendFrame(proto.TypeOpen, []byte(b)))
			}
			h.sh("fine", "echo still serving")
			for _, id := range []string{"nocmd", "wide", "trailing", "cut"} {
				h.waitControl(id, proto.TypeError, 1)
			}
			h.waitControl("fine", proto.TypeExit, 1)
		},
	},
	{
		name:  "credit-throttling",
		about: "a flood opened with 16 KiB of credit parks until each CREDIT grant",
		run: func(h *host) {
			const grant = 16 << 10
			granted := grant
			h.open(proto.Open{TerminalID: "flood", Cmd: "seq", Args: []string{"1", "20000"}, Credit: ptr(uint64(grant))})
			for {
				var exited bool
				h.until(fmt.Sprintf("flood to use its %d bytes of credit", granted), func(v replay.View) bool {
					t := v.Term("flood")
					exited = t.Count(proto.TypeExit) > 0
					return exited || len(t.Output) >= granted
				})
				if exited {
					return
				}
				h.send(h.s.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "flood", Bytes: grant}))
				granted += grant
			}
		},
	},
	{
		name:  "close-escalation",
		about: "CLOSE hangs up; a child ignoring SIGHUP gets SIGKILL after the grace period",
		run: func(h *host) {
			h.open(proto.Open{TerminalID: "polite", Cmd: "cat"})
			h.sh("stubborn", `trap "" HUP; echo ready; exec sleep 60`)
			h.waitControl("polite", proto.TypeOpened, 1)
			h.waitOutput("stubborn", "ready")
			h.send(h.s.SendJSON(proto.TypeClose, proto.Close{TerminalID: "polite"}))
			h.send(h.s.SendJSON(proto.TypeClose, proto.Close{TerminalID: "stubborn"}))
			h.waitControl("polite", proto.TypeExit, 1)
			h.waitControl("stubborn", proto.TypeExit, 1)
		},
	},
	{
		name:  "stdin-eof-shutdown",
		about: "closing the sidecar's stdin kills every terminal and flushes their EXITs",
		run: func(h *host) {
			h.open(proto.Open{TerminalID: "sleeper", Cmd: "sleep", Args: []string{"60"}})
			h.sh("pid", "echo pid=$$; exec sleep 60")
			h.waitControl("sleeper", proto.TypeOpened, 1)
			h.waitOutput("pid", "pid=")
			h.s.CloseInput()
		},
		// The shell prints its pid, which differs on every run.
		notes: []record.Annotation{{TerminalID: "pid", Output: record.OutputIgnore}},
	},
	{
		name:  "two-interleaved",
		about: "two cats typed into in turns; each sees only its own input",
		run: func(h *host) {
			h.open(proto.Open{TerminalID: "left", Cmd: "cat"})
			h.open(proto.Open{TerminalID: "right", Cmd: "cat"})
			for i := 1; i <= 3; i++ {
				l, r := fmt.Sprintf("left %d\n", i), fmt.Sprintf("right %d\n", i)
				h.input("left", l)
				h.input("right", r)
				h.waitOutput("left", fmt.Sprintf("left %d\r\nleft %d\r\n", i, i))
				h.waitOutput("right", fmt.Sprintf("right %d\r\nright %d\r\n", i, i))
			}
			h.input("left", "\x04")
			h.input("right", "\x04")
			h.waitControl("left", proto.TypeExit, 1)
			h.waitControl("right", proto.TypeExit, 1)
		},
	},
	{
		name:  "resize",
		about: "RESIZE is seen by the child (stty size) before the input that follows it",
		run: func(h *host) {
			h.sh("size", "stty size; read x; stty size; read x; stty size")
			h.waitOutput("size", "24 80\r\n")
			h.send(h.s.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "size", Cols: 100, Rows: 30}))
			h.input("size", "\n")
			h.waitOutput("size", "30 100\r\n")
			h.send(h.s.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "size", Cols: 132, Rows: 50}))
			h.input("size", "\n")
			h.waitControl("size", proto.TypeExit, 1)
		},
	},
}
