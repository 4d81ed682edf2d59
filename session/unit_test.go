//go:build unix

package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/session/wire"
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

func TestDescribeTermios(t *testing.T) {
	var tio unix.Termios
	tio.Iflag, tio.Oflag, tio.Lflag, tio.Cflag = 0x0500, 0x0005, 0x8a3b, 0xf00bf
	tio.Cc[unix.VINTR], tio.Cc[unix.VEOF], tio.Cc[unix.VERASE] = 3, 4, 0x7f
	tio.Cc[unix.VKILL], tio.Cc[unix.VSUSP], tio.Cc[unix.VQUIT] = 0x15, 0x1a, 0x1c
	got := describeTermios(&tio)
	want := wire.TermiosInfo{
		Mode:  "cooked",
		Flags: []string{"ECHO", "ISIG", "IEXTEN", "ICRNL", "IXON", "OPOST", "ONLCR"},
		Hex:   wire.TermiosHex{Iflag: "0x0500", Oflag: "0x0005", Lflag: "0x8a3b", Cflag: "0xf00bf"},
		CC:    wire.ControlCCs{VINTR: "^C", VEOF: "^D", VERASE: "^?", VKILL: "^U", VSUSP: "^Z", VQUIT: `^\`},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	tio.Lflag &^= unix.ICANON
	if got := describeTermios(&tio); got.Mode != "raw" {
		t.Errorf("without ICANON: mode %q", got.Mode)
	}
	// interminai's set: IXOFF is reported, ECHONL is not.
	tio.Iflag, tio.Oflag, tio.Lflag = unix.IXOFF|unix.INLCR|unix.IGNCR, 0, unix.ECHONL|unix.IEXTEN
	if got := fmt.Sprint(describeTermios(&tio).Flags); got != "[IEXTEN INLCR IGNCR IXOFF]" {
		t.Errorf("flags %s, want [IEXTEN INLCR IGNCR IXOFF]", got)
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
	for c, want := range map[uint8]string{0: "<disabled>", 1: "^A", 3: "^C", 0x1b: "^[", 0x1c: `^\`, 0x1f: "^_", 0x7f: "^?", 'a': "0x61", 0xff: "0xff"} {
		if got := caret(c); got != want {
			t.Errorf("caret(%#x) = %q, want %q", c, got, want)
		}
	}
}

// An attach's repaint leaves the user's terminal where the program left
// its own: with a line filled to its last column, the wrap pending (the
// next character goes on the next line), the pen the next text is
// written with, the scroll region and the other modes.
func TestRepaintKeepsWhatTheProgramSet(t *testing.T) {
	const cols, rows = 20, 4
	cases := []struct{ name, out, after string }{
		{"wrap pending, pen kept", "$ \x1b[1;32m" + strings.Repeat("g", cols-2) + "\x1b[0;35m", "more"},
		{"wide character last", strings.Repeat("y", cols-2) + "中", "NEXT"},
		{"no wrap pending", "\x1b[4mshort", " line"},
		{"scroll region", "\x1b[2;3r\x1b[3;1Hin region", "\n\nscrolled\x1b[S"},
		{"origin mode", "\x1b[2;4r\x1b[?6h\x1b[2;5Hhere", "\x1b[1;1Htop of region"},
		{"insert mode", "abcdef\x1b[1;3H\x1b[4h", "XY"},
		{"line drawing in G1, shifted out", "\x1b)0\x0eqq", "qq\x0fqq"},
		{"line drawing in G0", "\x1b(0x", "xq"},
		{"other modes", "\x1b[?5h\x1b[?1004h\x1b[?1002h\x1b[?1016h\x1b[?9h\x1b[20h\x1b[5 q", "a\nb"},
		{"left and right margins", "\x1b[?69h\x1b[5;12s\x1b[2;5Hwrapped text", " and more in the margins"},
		{"margins in origin mode", "\x1b[2;4r\x1b[?69h\x1b[3;9s\x1b[?6h\x1b[2;2Hat", "\x1b[1;1Hcorner"},
		{"margins mode, no margins", "\x1b[?69h\x1b[2;2Hx", "\x1b[1;5s12345678"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(screen.New(cols, rows, screen.Options{}))
			st.feed([]byte(tc.out))
			st.mu.Lock()
			rp := repaint(st)
			st.mu.Unlock()
			got := screen.New(cols, rows, screen.Options{})
			got.Write(append(rp, tc.after...))
			want := screen.New(cols, rows, screen.Options{})
			want.Write([]byte(tc.out + tc.after))
			for n := 1; n <= rows; n++ {
				if g, w := got.Line(n, true), want.Line(n, true); g != w {
					t.Errorf("line %d after the repaint and %q: %q, after the program's output %q", n, tc.after, g, w)
				}
			}
			gr, gc := got.Cursor()
			wr, wc := want.Cursor()
			if gr != wr || gc != wc {
				t.Errorf("cursor %d,%d, want %d,%d", gr, gc, wr, wc)
			}
			for _, m := range []int{1, 5, 6, 7, 9, 69, 1000, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 2004} {
				if g, w := got.PrivateMode(m), want.PrivateMode(m); g != w {
					t.Errorf("mode ?%d %v after the repaint, %v after the program's output", m, g, w)
				}
			}
			gl, gr2 := got.Margins()
			wl, wr2 := want.Margins()
			if gl != wl || gr2 != wr2 {
				t.Errorf("margins %d-%d after the repaint, %d-%d after the program's output", gl, gr2, wl, wr2)
			}
			if got.InsertMode() != want.InsertMode() || got.NewlineMode() != want.NewlineMode() || got.CursorStyle() != want.CursorStyle() {
				t.Errorf("insert %v, newline %v, cursor style %d after the repaint; %v, %v, %d after the program's output",
					got.InsertMode(), got.NewlineMode(), got.CursorStyle(), want.InsertMode(), want.NewlineMode(), want.CursorStyle())
			}
		})
	}
}
