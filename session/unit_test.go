package session

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestLineRange(t *testing.T) {
	const rows = 24
	for _, tc := range []struct {
		name             string
		from             int
		fromSet, oldest  bool
		to               int
		toSet            bool
		avail            int
		wantFrom, wantTo int
	}{
		{"default", 0, false, false, 0, false, 50, 1, 24},
		{"from 0 is line 1", 0, true, false, 0, false, 50, 1, 24},
		{"last 10 scrollback and screen", -10, true, false, 0, false, 50, -10, 24},
		{"from beyond scrollback clamps", -100, true, false, 0, false, 50, -50, 24},
		{"oldest", 0, false, true, 0, false, 50, -50, 24},
		{"oldest without scrollback", 0, false, true, 0, false, 0, 1, 24},
		{"to 0 is scrollback only", 0, false, true, 0, true, 50, -50, -1},
		{"to past the screen clamps", 1, true, false, 99, true, 0, 1, 24},
		{"scrollback subset", -5, true, false, -2, true, 50, -5, -2},
		{"negative from without scrollback", -5, true, false, 0, false, 0, 1, 24},
		{"screen subset", 3, true, false, 5, true, 10, 3, 5},
	} {
		f, to := lineRange(tc.from, tc.fromSet, tc.oldest, tc.to, tc.toSet, tc.avail, rows)
		if f != tc.wantFrom || to != tc.wantTo {
			t.Errorf("%s: got %d..%d, want %d..%d", tc.name, f, to, tc.wantFrom, tc.wantTo)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SIGTERM", "SIGTERM"}, {"TERM", "SIGTERM"}, {"term", "SIGTERM"}, {"15", "SIGTERM"},
		{"SIGKILL", "SIGKILL"}, {"9", "SIGKILL"}, {"INT", "SIGINT"}, {"2", "SIGINT"},
		{"HUP", "SIGHUP"}, {"1", "SIGHUP"}, {"QUIT", "SIGQUIT"}, {"3", "SIGQUIT"},
		{"USR1", "SIGUSR1"}, {"10", "SIGUSR1"}, {"SIGUSR2", "SIGUSR2"}, {"12", "SIGUSR2"},
		{"WINCH", "SIGWINCH"},
	} {
		_, name, err := ParseSignal(tc.in)
		if err != nil || name != tc.want {
			t.Errorf("ParseSignal(%q) = %q, %v; want %q", tc.in, name, err, tc.want)
		}
	}
	for _, bad := range []string{"NOTASIGNAL", "9999", "0", "-1", "", "SIG", "1.5"} {
		if _, _, err := ParseSignal(bad); err == nil || !strings.HasPrefix(err.Error(), "Invalid signal") {
			t.Errorf("ParseSignal(%q): err %v, want Invalid signal", bad, err)
		}
	}
}

// TestDescribeTermios checks the rendering against the protocol's example.
func TestDescribeTermios(t *testing.T) {
	var tio unix.Termios
	tio.Iflag, tio.Oflag, tio.Lflag, tio.Cflag = 0x0500, 0x0005, 0x8a3b, 0xf00bf
	tio.Cc[unix.VINTR], tio.Cc[unix.VEOF], tio.Cc[unix.VERASE] = 3, 4, 0x7f
	tio.Cc[unix.VKILL], tio.Cc[unix.VSUSP], tio.Cc[unix.VQUIT] = 0x15, 0x1a, 0x1c
	got := describeTermios(&tio)
	want := TermiosInfo{
		Mode:  "cooked",
		Flags: []string{"ECHO", "ISIG", "ICRNL", "IXON", "OPOST", "ONLCR"},
		Hex:   TermiosHex{Iflag: "0x0500", Oflag: "0x0005", Lflag: "0x8a3b", Cflag: "0xf00bf"},
		CC:    ControlCCs{VINTR: "^C", VEOF: "^D", VERASE: "^?", VKILL: "^U", VSUSP: "^Z", VQUIT: `^\`},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	tio.Lflag &^= unix.ICANON
	if got := describeTermios(&tio); got.Mode != "raw" {
		t.Errorf("without ICANON: mode %q", got.Mode)
	}
}

func TestParseRequestErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "Invalid request: empty request"},
		{`{`, "Invalid request: unexpected end of JSON input"},
		{`[]`, "Invalid request: expected a JSON object"},
		{`null`, "Invalid request: expected a JSON object"},
		{`{}`, "Invalid request: missing 'type' field"},
		{`{"type":null}`, "Invalid request: missing 'type' field"},
		{`{"type":1}`, "Invalid request: 'type' must be a string"},
	} {
		_, _, err := parseRequest([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("parseRequest(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestQueueKeepsArrivalOrder(t *testing.T) {
	q := newQueue()
	for i := 0; i < 100; i++ {
		q.push(&request{line: []byte(fmt.Sprint(i))})
	}
	done := make(chan struct{})
	for i := 0; i < 100; i++ {
		if r := q.pop(done); string(r.line) != fmt.Sprint(i) {
			t.Fatalf("pop %d got %s", i, r.line)
		}
	}
	close(done)
	if r := q.pop(done); r != nil {
		t.Fatalf("pop after done: %v", r)
	}
	q.close()
	if q.push(&request{}) {
		t.Fatal("push after close succeeded")
	}
}

func TestCaret(t *testing.T) {
	for c, want := range map[uint8]string{0: "^@", 3: "^C", 0x1c: `^\`, 0x7f: "^?", 'a': "a", 0xff: "0xff"} {
		if got := caret(c); got != want {
			t.Errorf("caret(%#x) = %q, want %q", c, got, want)
		}
	}
}

func ExampleParseSignal() {
	_, name, _ := ParseSignal("usr1")
	fmt.Println(name)
	_, _, err := ParseSignal("NOTASIGNAL")
	fmt.Println(err)
	// Output:
	// SIGUSR1
	// Invalid signal: NOTASIGNAL
}

// TestDebugTextFlags: the flags line lists the set flags, and is left out
// when none is set (as interminai prints it).
func TestDebugTextFlags(t *testing.T) {
	d := DebugData{Termios: TermiosInfo{Mode: "raw", Flags: []string{"OPOST"}}}
	if got := d.Text(); !strings.Contains(got, "\n  Flags: OPOST\n") {
		t.Errorf("with a flag:\n%s", got)
	}
	d.Termios.Flags = nil
	if got := d.Text(); strings.Contains(got, "Flags:") {
		t.Errorf("with no flag set, a flags line:\n%s", got)
	}
}
