package screen

import (
	"os"
	"strings"
	"testing"
)

// logical returns the scrollback and screen as logical lines (soft-wrapped
// rows joined), with trailing blank lines dropped: the text a reflow
// must keep whatever the width.
func logical(s *Screen) []string {
	var out []string
	var cur strings.Builder
	add := func(l []cell, wrapped bool) {
		text := string(s.appendPlain(nil, l))
		if wrapped {
			// Keep blanks at the wrap point; drop the pad a wide character
			// left at the margin.
			n := len(l)
			if n > 0 && l[n-1].flags&flagWrapPad != 0 {
				n--
			}
			var b []byte
			for i := 0; i < n; i++ {
				b = s.appendCell(b, l[:n], i)
			}
			text = string(b)
		}
		cur.WriteString(text)
		if !wrapped {
			out = append(out, strings.TrimRight(cur.String(), " "))
			cur.Reset()
		}
	}
	for i := s.scroll.len(); i >= 1; i-- {
		add(s.scroll.at(i), s.scroll.wrappedAt(i))
	}
	for r := 0; r < s.rows; r++ {
		add(s.main.row(r), s.main.isWrapped(r) && r < s.rows-1)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func screenLines(s *Screen) []string {
	var out []string
	for n := -s.ScrollbackLen(); n <= s.rows; n++ {
		if n != 0 {
			out = append(out, s.Line(n, false))
		}
	}
	return out
}

type reflowCase struct {
	name       string
	cols, rows int
	in         string
	sizes      [][2]int // resized to each in turn
	lines      []string // screen after the last resize (rest blank)
	scroll     []string // scrollback, oldest first
	row, col   int
	sb         int // Options.Scrollback (0: default)
}

func TestReflow(t *testing.T) {
	cases := []reflowCase{
		{name: "soft wrap rejoins", cols: 10, rows: 4, in: "0123456789abcde", sizes: [][2]int{{20, 4}},
			lines: []string{"0123456789abcde"}, col: 15},
		{name: "narrow wraps", cols: 20, rows: 4, in: "0123456789abcde", sizes: [][2]int{{10, 4}},
			lines: []string{"0123456789", "abcde"}, row: 1, col: 5},
		{name: "hard lines stay apart", cols: 10, rows: 4, in: "abc\r\ndef", sizes: [][2]int{{20, 4}},
			lines: []string{"abc", "def"}, row: 1, col: 3},
		{name: "cursor stays on its character", cols: 10, rows: 4, in: "0123456789abcde\x1b[2;3H", sizes: [][2]int{{5, 4}},
			lines: []string{"01234", "56789", "abcde"}, row: 2, col: 2},
		{name: "cursor in the blanks", cols: 10, rows: 4, in: "ab\x1b[1;8H", sizes: [][2]int{{5, 4}},
			lines: []string{"ab"}, col: 4},
		{name: "pending wrap survives", cols: 10, rows: 4, in: "0123456789", sizes: [][2]int{{5, 4}, {10, 4}},
			lines: []string{"0123456789"}, col: 9},
		{name: "pending wrap then text", cols: 10, rows: 4, in: "0123456789", sizes: [][2]int{{20, 4}},
			lines: []string{"0123456789"}, col: 10},
		{name: "blank at the wrap point kept", cols: 5, rows: 4, in: "abcd efgh", sizes: [][2]int{{20, 4}},
			lines: []string{"abcd efgh"}, col: 9},
		{name: "wide char wraps whole", cols: 6, rows: 4, in: "abcde中f", sizes: [][2]int{{10, 4}, {6, 4}, {5, 4}},
			lines: []string{"abcde", "中f"}, row: 1, col: 3},
		{name: "wide pad dropped on rejoin", cols: 6, rows: 4, in: "abcde中f", sizes: [][2]int{{20, 4}},
			lines: []string{"abcde中f"}, col: 8},
		{name: "narrowing pushes into scrollback", cols: 10, rows: 2, in: "0123456789\r\nabcdefghij", sizes: [][2]int{{5, 2}},
			scroll: []string{"01234", "56789"}, lines: []string{"abcde", "fghij"}, row: 1, col: 4},
		{name: "widening pulls back", cols: 10, rows: 2, in: "0123456789\r\nabcdefghij", sizes: [][2]int{{5, 2}, {10, 2}},
			lines: []string{"0123456789", "abcdefghij"}, row: 1, col: 9},
		{name: "blank rows absorb growth", cols: 10, rows: 4, in: "0123456789", sizes: [][2]int{{5, 4}},
			lines: []string{"01234", "56789"}, row: 1, col: 4},
		{name: "cleared screen does not pull history", cols: 10, rows: 2, in: "a\r\nb\r\nc\x1b[2J\x1b[Hx", sizes: [][2]int{{20, 2}},
			scroll: []string{"a"}, lines: []string{"x"}, col: 1},
		{name: "scrollback capacity", cols: 10, rows: 2, sb: 3, in: "0123456789\r\n0123456789\r\nabcdefghij", sizes: [][2]int{{2, 2}},
			scroll: []string{"ab", "cd", "ef"}, lines: []string{"gh", "ij"}, row: 1, col: 1},
		{name: "a wrap between margins is not a soft wrap", cols: 10, rows: 4, in: "\x1b[?69h\x1b[1;5s\x1b[1;1Habcdefg\x1b[?69l", sizes: [][2]int{{20, 4}},
			lines: []string{"abcde", "fg"}, row: 1, col: 2},
		{name: "height and width together", cols: 10, rows: 4, in: "0123456789abcde\r\nxy", sizes: [][2]int{{5, 2}},
			scroll: []string{"01234", "56789"}, lines: []string{"abcde", "xy"}, row: 1, col: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.cols, tc.rows, Options{Scrollback: tc.sb})
			s.Write([]byte(tc.in))
			for _, sz := range tc.sizes {
				s.Resize(sz[0], sz[1])
			}
			var got []string
			for n := -s.ScrollbackLen(); n <= -1; n++ {
				got = append(got, s.Line(n, false))
			}
			if strings.Join(got, "|") != strings.Join(tc.scroll, "|") {
				t.Errorf("scrollback %q, want %q", got, tc.scroll)
			}
			_, rows := s.Size()
			for i := 0; i < rows; i++ {
				want := ""
				if i < len(tc.lines) {
					want = tc.lines[i]
				}
				if g := s.Line(i+1, false); g != want {
					t.Errorf("line %d = %q, want %q", i+1, g, want)
				}
			}
			if r, c := s.Cursor(); r != tc.row || c != tc.col {
				t.Errorf("cursor %d,%d, want %d,%d", r, c, tc.row, tc.col)
			}
		})
	}
}

// TestReflowPendingWrapWrites: after widening, the character that
// follows a pending wrap goes after the last one, not over it.
func TestReflowPendingWrapWrites(t *testing.T) {
	s := New(10, 4, Options{})
	s.Write([]byte("0123456789"))
	s.Resize(20, 4)
	s.Write([]byte("X"))
	if got := s.Line(1, false); got != "0123456789X" {
		t.Errorf("line 1 = %q", got)
	}
}

// TestReflowAltScreen: the alternate screen is cut, not reflowed; the
// main screen under it is reflowed and ?1049l puts the cursor back on
// its character.
func TestReflowAltScreen(t *testing.T) {
	s := New(10, 4, Options{})
	s.Write([]byte("0123456789abc\x1b[1;5H\x1b[?1049h\x1b[H0123456789ab"))
	s.Resize(5, 4)
	if got := s.Line(1, false); got != "01234" {
		t.Errorf("alt line 1 = %q, want it cut", got)
	}
	if got := s.Line(2, false); got != "ab" {
		t.Errorf("alt line 2 = %q", got)
	}
	s.Write([]byte("\x1b[?1049lX"))
	want := []string{"0123X", "56789", "abc", ""}
	for i, w := range want {
		if g := s.Line(i+1, false); g != w {
			t.Errorf("main line %d = %q, want %q", i+1, g, w)
		}
	}
}

// TestResizeAltKeepsCursorLine: shrinking the height of the alternate
// screen drops rows from the top so the cursor's line stays, and nothing
// enters the scrollback.
func TestResizeAltKeepsCursorLine(t *testing.T) {
	s := New(10, 4, Options{})
	s.Write([]byte("\x1b[?1049h1\r\n2\r\n3\r\n4"))
	s.Resize(10, 2)
	if s.Line(1, false) != "3" || s.Line(2, false) != "4" || s.ScrollbackLen() != 0 {
		t.Errorf("lines %q %q, scrollback %d", s.Line(1, false), s.Line(2, false), s.ScrollbackLen())
	}
	if r, c := s.Cursor(); r != 1 || c != 1 {
		t.Errorf("cursor %d,%d", r, c)
	}
}

// TestReflowRecordedBash replays a recorded bash session (long output
// lines, a long typed command, wide characters, tabs) and resizes it
// 80 -> 40 -> 120 -> 80: at every width the logical text (scrollback and
// screen with soft wraps joined) is the same, and back at 80 columns the
// screen, scrollback and cursor are exactly what they were.
func TestReflowRecordedBash(t *testing.T) {
	stream, err := os.ReadFile("testdata/bash-wrap.bin")
	if err != nil {
		t.Fatal(err)
	}
	s := New(80, 24, Options{})
	s.Write(stream)
	want := logical(s)
	if len(want) < 10 {
		t.Fatalf("recording too short: %q", want)
	}
	before := screenLines(s)
	r0, c0 := s.Cursor()
	for _, cols := range []int{40, 120, 80} {
		s.Resize(cols, 24)
		if got := logical(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("at %d columns the text changed:\n%s", cols, lineDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
		}
		if cols == 40 && s.ScrollbackLen() == 0 {
			t.Errorf("at 40 columns nothing went to the scrollback; the test would not exercise it")
		}
		// The prompt line with the cursor is still the last one.
		if r, c := s.Cursor(); !strings.HasPrefix(s.Line(r+1, false), "rec$") || c != len("rec$ ")%cols {
			t.Errorf("at %d columns cursor %d,%d on %q", cols, r, c, s.Line(r+1, false))
		}
	}
	if after := screenLines(s); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("back at 80 columns:\n%s", lineDiff(strings.Join(before, "\n"), strings.Join(after, "\n")))
	}
	if r, c := s.Cursor(); r != r0 || c != c0 {
		t.Errorf("cursor %d,%d, was %d,%d", r, c, r0, c0)
	}
	// And the shell can carry on writing where it was.
	s.Write([]byte("exit"))
	if r, _ := s.Cursor(); s.Line(r+1, false) != "rec$ exit" {
		t.Errorf("prompt line %q", s.Line(r+1, false))
	}
}

// TestReflowKeepsGeneratedText resizes the screens of generated streams
// (the differential test's) to other widths and back: the logical text
// never changes, and the cursor stays inside the screen.
func TestReflowKeepsGeneratedText(t *testing.T) {
	for seed := int64(0); seed < 400; seed++ {
		cols, rows := 10+int(seed%50), 3+int(seed%20)
		s := New(cols, rows, Options{})
		s.Write(genStream(seed, cols, rows))
		want := strings.Join(logical(s), "\n")
		for _, w := range []int{cols/2 + 1, cols * 2, 3, cols} {
			s.Resize(w, rows)
			if r, c := s.Cursor(); r < 0 || r >= rows || c < 0 || c >= w {
				t.Fatalf("seed %d: cursor %d,%d outside %dx%d", seed, r, c, w, rows)
			}
			if s.AltScreen() {
				continue // the main screen's text is checked once it shows again
			}
			if got := strings.Join(logical(s), "\n"); got != want {
				t.Fatalf("seed %d (%dx%d) at %d columns:\n%s", seed, cols, rows, w, lineDiff(want, got))
			}
		}
	}
}

// TestResizeKeepsPendingWrap: a resize that leaves the cursor in the last
// column keeps a pending wrap, as alacritty (interminai's xterm mode) does,
// so the next character starts the next row instead of overwriting the
// last column: a height change on either screen, and a narrower
// alternate screen (the cursor is clamped into its last column).
func TestResizeKeepsPendingWrap(t *testing.T) {
	for _, c := range []struct {
		name       string
		in         string
		cols, rows int
		lines      []string
		row, col   int
	}{
		{"main taller", "abcdefghij", 10, 6, []string{"abcdefghij", "X"}, 1, 1},
		{"main shorter", "1\r\n2\r\n3\r\nabcdefghij", 10, 2, []string{"abcdefghij", "X"}, 1, 1},
		{"alternate taller", "\x1b[?1049habcdefghij", 10, 6, []string{"abcdefghij", "X"}, 1, 1},
		{"alternate narrower", "\x1b[?1049habcdefghij", 8, 4, []string{"abcdefgh", "X"}, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(10, 4, Options{})
			s.Write([]byte(c.in))
			s.Resize(c.cols, c.rows)
			if !s.PendingWrap() {
				t.Errorf("no wrap pending after the resize")
			}
			s.Write([]byte("X"))
			for i, want := range c.lines {
				if got := s.Line(i+1, false); got != want {
					t.Errorf("line %d = %q, want %q", i+1, got, want)
				}
			}
			if row, col := s.Cursor(); row != c.row || col != c.col {
				t.Errorf("cursor = %d,%d, want %d,%d", row, col, c.row, c.col)
			}
		})
	}
}
