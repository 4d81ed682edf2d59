package screen

import (
	"fmt"
	"strings"
	"testing"
)

// screenCase feeds in to a fresh screen and checks the visible lines (as
// many as given; the rest must be blank) and the cursor.
type screenCase struct {
	name       string
	cols, rows int
	in         string
	lines      []string
	row, col   int
}

func runScreenCases(t *testing.T, cases []screenCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cols, rows := tc.cols, tc.rows
			if cols == 0 {
				cols, rows = 10, 4
			}
			s := New(cols, rows, Options{})
			s.Write([]byte(tc.in))
			for i := 0; i < rows; i++ {
				want := ""
				if i < len(tc.lines) {
					want = tc.lines[i]
				}
				if got := s.Line(i+1, false); got != want {
					t.Errorf("line %d = %q, want %q", i+1, got, want)
				}
			}
			if r, c := s.Cursor(); r != tc.row || c != tc.col {
				t.Errorf("cursor = %d,%d, want %d,%d", r, c, tc.row, tc.col)
			}
		})
	}
}

func TestText(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "plain", in: "hello", lines: []string{"hello"}, col: 5},
		{name: "crlf", in: "ab\r\ncd", lines: []string{"ab", "cd"}, row: 1, col: 2},
		{name: "lf keeps column", in: "ab\ncd", lines: []string{"ab", "  cd"}, row: 1, col: 4},
		{name: "vt and ff are lf", in: "a\vb\fc", lines: []string{"a", " b", "  c"}, row: 2, col: 3},
		{name: "backspace", in: "abc\b\bX", lines: []string{"aXc"}, col: 2},
		{name: "backspace at col 0", in: "\bX", lines: []string{"X"}, col: 1},
		{name: "bell ignored", in: "a\ab", lines: []string{"ab"}, col: 2},
		{name: "tab", in: "a\tb", cols: 20, rows: 2, lines: []string{"a       b"}, col: 9},
		{name: "tab stops at margin", in: "a\t\t\tb", lines: []string{"a        b"}, col: 9},
		{name: "delayed wrap", in: "0123456789", lines: []string{"0123456789"}, col: 9},
		{name: "wrap on next char", in: "0123456789X", lines: []string{"0123456789", "X"}, row: 1, col: 1},
		{name: "cr cancels wrap", in: "0123456789\rX", lines: []string{"X123456789"}, col: 1},
		{name: "scroll at bottom", in: "1\r\n2\r\n3\r\n4\r\n5", lines: []string{"2", "3", "4", "5"}, row: 3, col: 1},
		{name: "autowrap off", in: "\x1b[?7l0123456789XYZ", lines: []string{"012345678Z"}, col: 9},
		{name: "autowrap on again", in: "\x1b[?7l\x1b[?7h0123456789X", lines: []string{"0123456789", "X"}, row: 1, col: 1},
		{name: "utf8", in: "héllo", lines: []string{"héllo"}, col: 5},
		{name: "invalid utf8", in: "a\xffb\xe4c", lines: []string{"a\ufffdb\ufffdc"}, col: 5},
		// As alacritty (vte) shows them: a stray 0x80-0x9f byte is nothing
		// (xterm.js agrees), any other malformed piece one U+FFFD each.
		{name: "stray c1 bytes show nothing", in: "a\x86b\x9bc\x80d", lines: []string{"abcd"}, col: 4},
		{name: "stray byte above c1", in: "a\xa0b", lines: []string{"a\ufffdb"}, col: 3},
		{name: "surrogate in pieces", in: "a\xed\xa0\x80b", lines: []string{"a\ufffd\ufffdb"}, col: 4},
		{name: "overlong in pieces", in: "a\xc0\x80b", lines: []string{"a\ufffdb"}, col: 3},
		{name: "binary bytes", cols: 20, rows: 4, in: "\x80\x81\x8f\x90\x9f\xbf\xc2\xc0\xf8Z", lines: []string{"\ufffd\ufffd\ufffd\ufffdZ"}, col: 5},
		{name: "wide", in: "中a", lines: []string{"中a"}, col: 3},
		{name: "emoji", in: "😀x", lines: []string{"😀x"}, col: 3},
		{name: "wide wraps whole", in: "012345678中", lines: []string{"012345678", "中"}, row: 1, col: 2},
		{name: "wide dropped without autowrap", in: "\x1b[?7l012345678中", lines: []string{"012345678"}, col: 9},
		{name: "overwrite wide lead", in: "中\rx", lines: []string{"x"}, col: 1},
		{name: "overwrite wide trail", in: "中\x1b[2Gx", lines: []string{" x"}, col: 2},
		{name: "wide over wide", in: "a中b\x1b[3G文", lines: []string{"a 文"}, col: 4},
		{name: "combining", in: "e\u0301x", lines: []string{"e\u0301x"}, col: 2},
		{name: "combining on wide", in: "中\u0301", lines: []string{"中\u0301"}, col: 2},
		{name: "combining in pending wrap", in: "012345678e\u0301", lines: []string{"012345678e\u0301"}, col: 9},
		{name: "combining at start dropped", in: "\u0301a", lines: []string{"a"}, col: 1},
		{name: "del ignored", in: "a\x7fb", lines: []string{"ab"}, col: 2},
	})
}

func TestCursorAndEditing(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "CUP", in: "\x1b[2;3HX", lines: []string{"", "  X"}, row: 1, col: 3},
		{name: "CUP default", in: "abc\x1b[HX", lines: []string{"Xbc"}, col: 1},
		{name: "HVP", in: "\x1b[3;2fX", lines: []string{"", "", " X"}, row: 2, col: 2},
		{name: "CUP clamps", in: "\x1b[99;99HX", lines: []string{"", "", "", "         X"}, row: 3, col: 9},
		{name: "CUU CUD CUF CUB", in: "\x1b[3;5H\x1b[2A\x1b[3C\x1b[B\x1b[2DX", lines: []string{"", "     X"}, row: 1, col: 6},
		{name: "CUU stops at top", in: "\x1b[9AX", lines: []string{"X"}, col: 1},
		{name: "CNL CPL", in: "ab\x1b[2Ec\x1b[Fd", lines: []string{"ab", "d", "c"}, row: 1, col: 1},
		{name: "CHA and HPA", in: "\x1b[5Ga\x1b[2`b", lines: []string{" b  a"}, col: 2},
		{name: "VPA", in: "a\x1b[3db", lines: []string{"a", "", " b"}, row: 2, col: 2},
		{name: "HPR VPR", in: "\x1b[2a\x1b[1eX", lines: []string{"", "  X"}, row: 1, col: 3},
		{name: "ED 0", in: "aaaa\r\nbbbb\r\ncccc\x1b[2;3H\x1b[J", lines: []string{"aaaa", "bb"}, row: 1, col: 2},
		{name: "ED 1", in: "aaaa\r\nbbbb\r\ncccc\x1b[2;3H\x1b[1J", lines: []string{"", "   b", "cccc"}, row: 1, col: 2},
		{name: "ED 2", in: "aaaa\r\nbbbb\x1b[2J", lines: nil, row: 1, col: 4},
		{name: "EL 0", in: "abcdef\x1b[3G\x1b[K", lines: []string{"ab"}, col: 2},
		{name: "EL 1", in: "abcdef\x1b[3G\x1b[1K", lines: []string{"   def"}, col: 2},
		{name: "EL 2", in: "abcdef\x1b[3G\x1b[2K", lines: nil, col: 2},
		{name: "EL splits wide", in: "a中b\x1b[3G\x1b[K", lines: []string{"a"}, col: 2},
		{name: "ECH", in: "abcdef\x1b[2G\x1b[2X", lines: []string{"a  def"}, col: 1},
		{name: "ICH", in: "abcdef\x1b[2G\x1b[2@", lines: []string{"a  bcdef"}, col: 1},
		{name: "ICH pushes off edge", in: "0123456789\x1b[1G\x1b[3@", lines: []string{"   0123456"}, col: 0},
		{name: "DCH", in: "abcdef\x1b[2G\x1b[2P", lines: []string{"adef"}, col: 1},
		{name: "IL", in: "a\r\nb\r\nc\x1b[2;1H\x1b[L", lines: []string{"a", "", "b", "c"}, row: 1},
		{name: "DL", in: "a\r\nb\r\nc\x1b[1;1H\x1b[2M", lines: []string{"c"}},
		{name: "SU", in: "a\r\nb\r\nc\x1b[S", lines: []string{"b", "c"}, row: 2, col: 1},
		{name: "SD", in: "a\r\nb\x1b[2T", lines: []string{"", "", "a", "b"}, row: 1, col: 1},
		{name: "REP", in: "ab\x1b[3b", lines: []string{"abbbb"}, col: 5},
		{name: "REP wide", in: "中\x1b[2b", lines: []string{"中中中"}, col: 6},
		{name: "IRM", in: "abc\x1b[1G\x1b[4hXY\x1b[4lZ", lines: []string{"XYZbc"}, col: 3},
		{name: "DECSC DECRC", in: "\x1b[2;3H\x1b7\x1b[HX\x1b8Y", lines: []string{"X", "  Y"}, row: 1, col: 3},
		{name: "CSI s u", in: "\x1b[2;3H\x1b[s\x1b[HX\x1b[uY", lines: []string{"X", "  Y"}, row: 1, col: 3},
		{name: "DECRC without save", in: "\x1b[3;3H\x1b8X", lines: []string{"X"}, col: 1},
		{name: "DECALN", in: "\x1b#8", lines: []string{"EEEEEEEEEE", "EEEEEEEEEE", "EEEEEEEEEE", "EEEEEEEEEE"}},
		{name: "HTS TBC", cols: 20, rows: 2, in: "\x1b[3G\x1bH\x1b[1G\tX\x1b[3G\x1b[g\x1b[1G\tY", lines: []string{"  X     Y"}, col: 9},
		{name: "TBC all", cols: 20, rows: 2, in: "\x1b[3g\tX", lines: []string{"                   X"}, col: 19},
		{name: "CHT CBT", cols: 30, rows: 2, in: "\x1b[2IX\x1b[2ZY", lines: []string{"        Y       X"}, col: 9},
	})
}

func TestScrollRegion(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "LF scrolls region", cols: 5, rows: 5, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[4;1H\nX",
			lines: []string{"1", "3", "4", "X", "5"}, row: 3, col: 1},
		{name: "IND inside", cols: 5, rows: 5, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[4;1H\x1bDX",
			lines: []string{"1", "3", "4", "X", "5"}, row: 3, col: 1},
		{name: "NEL inside", cols: 5, rows: 5, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[4;3H\x1bEX",
			lines: []string{"1", "3", "4", "X", "5"}, row: 3, col: 1},
		{name: "RI at top", cols: 5, rows: 5, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[2;1H\x1bMX",
			lines: []string{"1", "X", "2", "3", "5"}, row: 1, col: 1},
		{name: "RI at screen top", cols: 5, rows: 3, in: "1\r\n2\r\n3\x1b[H\x1bMX",
			lines: []string{"X", "1", "2"}, col: 1},
		{name: "DECSTBM homes", cols: 5, rows: 5, in: "\x1b[3;3H\x1b[2;4rX", lines: []string{"X"}, col: 1},
		{name: "origin mode", cols: 5, rows: 5, in: "\x1b[2;4r\x1b[?6h\x1b[1;1HX\x1b[9;1HY",
			lines: []string{"", "X", "", "Y"}, row: 3, col: 1},
		{name: "invalid region ignored", cols: 5, rows: 3, in: "\x1b[3;2r1\r\n2\r\n3\r\n4",
			lines: []string{"2", "3", "4"}, row: 2, col: 1},
		{name: "IL DL within region", cols: 5, rows: 5, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[3;1H\x1b[L",
			lines: []string{"1", "2", "", "3", "5"}, row: 2},
		{name: "DL outside region ignored", cols: 5, rows: 5, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[5;1H\x1b[M",
			lines: []string{"1", "2", "3", "4", "5"}, row: 4},
		{name: "CUD stops at bottom margin", cols: 5, rows: 5, in: "\x1b[2;3r\x1b[2;1H\x1b[9BX",
			lines: []string{"", "", "X"}, row: 2, col: 1},
	})
}

func TestScrollback(t *testing.T) {
	s := New(5, 2, Options{Scrollback: 3})
	s.Write([]byte("1\r\n2\r\n3\r\n4\r\n5\r\n6"))
	if s.ScrollbackLen() != 3 || s.ScrollbackCap() != 3 {
		t.Fatalf("len/cap = %d/%d", s.ScrollbackLen(), s.ScrollbackCap())
	}
	want := map[int]string{-3: "2", -2: "3", -1: "4", 1: "5", 2: "6", 0: "", -4: "", 3: ""}
	for n, w := range want {
		if got := s.Line(n, false); got != w {
			t.Errorf("Line(%d) = %q, want %q", n, got, w)
		}
	}

	// Alternate screen and regions not at the top do not feed scrollback.
	s = New(5, 3, Options{})
	s.Write([]byte("\x1b[?1049h1\r\n2\r\n3\r\n4\x1b[?1049l"))
	s.Write([]byte("\x1b[2;3r\x1b[3;1Ha\r\nb\r\nc\x1b[r"))
	if n := s.ScrollbackLen(); n != 0 {
		t.Errorf("scrollback = %d, want 0", n)
	}
	// ED 3 clears it.
	s.Write([]byte("\x1b[H1\r\n2\r\n3\r\n4\r\n5"))
	if n := s.ScrollbackLen(); n != 2 {
		t.Errorf("scrollback = %d, want 2", n)
	}
	s.Write([]byte("\x1b[3J"))
	if n := s.ScrollbackLen(); n != 0 {
		t.Errorf("after ED 3 scrollback = %d", n)
	}
	if New(5, 2, Options{Scrollback: -1}).ScrollbackCap() != 0 || New(5, 2, Options{}).ScrollbackCap() != 10000 {
		t.Error("capacity defaults")
	}
	s = New(5, 2, Options{Scrollback: -1})
	s.Write([]byte("1\r\n2\r\n3"))
	if s.ScrollbackLen() != 0 {
		t.Error("negative capacity kept lines")
	}
}

func TestSGRRendering(t *testing.T) {
	cases := []struct{ name, in, ansi, plain string }{
		{"plain", "abc", "abc", "abc"},
		{"16 colours", "\x1b[31ma\x1b[42mb\x1b[0mc", "\x1b[31ma\x1b[42mb\x1b[0mc", "abc"},
		{"bright", "\x1b[91;104mx", "\x1b[91;104mx\x1b[0m", "x"},
		{"256", "\x1b[38;5;196mx\x1b[48;5;21my", "\x1b[38;5;196mx\x1b[48;5;21my\x1b[0m", "xy"},
		{"truecolour", "\x1b[38;2;1;2;3mx\x1b[48;2;4;5;6my", "\x1b[38;2;1;2;3mx\x1b[48;2;4;5;6my\x1b[0m", "xy"},
		{"colon forms", "\x1b[38:2::10:20:30mx\x1b[38:5:7my\x1b[38:2:1:2:3mz", "\x1b[38;2;10;20;30mx\x1b[38;5;7my\x1b[38;2;1;2;3mz\x1b[0m", "xyz"},
		{"attributes", "\x1b[1;2;3;4;5;7;8;9mx", "\x1b[1;2;3;4;5;7;8;9mx\x1b[0m", "x"},
		{"only changes", "\x1b[1ma\x1b[31mb", "\x1b[1ma\x1b[31mb\x1b[0m", "ab"},
		{"turning off resets", "\x1b[1;31ma\x1b[22mb", "\x1b[1;31ma\x1b[0;31mb\x1b[0m", "ab"},
		{"resets", "\x1b[1;2;3;4;5;7;8;9;31;41m\x1b[22;23;24;25;27;28;29;39;49mx", "x", "x"},
		{"default fg", "\x1b[31;42ma\x1b[39mb", "\x1b[31;42ma\x1b[39mb\x1b[0m", "ab"},
		{"empty SGR resets", "\x1b[1ma\x1b[mb", "\x1b[1ma\x1b[0mb", "ab"},
		{"underline off via 4:0", "\x1b[4ma\x1b[4:0mb", "\x1b[4ma\x1b[0mb", "ab"},
		{"erase keeps background", "\x1b[44m\x1b[K\x1b[0m", "\x1b[44m          \x1b[0m", ""},
		{"trailing spaces trimmed", "a   ", "a", "a"},
		{"wide once", "\x1b[32m中\x1b[0m", "\x1b[32m中\x1b[0m", "中"},
		{"underline colour ignored", "\x1b[58;5;3mx", "x", "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(10, 2, Options{})
			s.Write([]byte(tc.in))
			if got := s.Line(1, true); got != tc.ansi {
				t.Errorf("ansi = %q, want %q", got, tc.ansi)
			}
			if got := s.Line(1, false); got != tc.plain {
				t.Errorf("plain = %q, want %q", got, tc.plain)
			}
			if seqs, _ := s.Unhandled(); len(seqs) != 0 {
				t.Errorf("unexpected unhandled %v", seqs)
			}
		})
	}
}

// TestDECCOLM: set or reset, DECCOLM resets the scroll region, clears
// the screen and homes the cursor, as alacritty (interminai's xterm mode)
// does; there is no 132-column mode, so the width stays.
func TestDECCOLM(t *testing.T) {
	runScreenCases(t, []screenCase{
		// With the region 2;3 kept, the LFs from row 4 (below it) would
		// not scroll and X would stay on row 1.
		{name: "reset clears and drops the region", in: "1\r\n2\r\n3\x1b[2;3r\x1b[3;5H\x1b[?3lX\x1b[4;1H\n\nY",
			lines: []string{"", "", "", "Y"}, row: 3, col: 1},
		{name: "set homes in origin mode", in: "1\r\n2\x1b[2;3r\x1b[?6h\x1b[2;2H\x1b[?3hZ", lines: []string{"Z"}, row: 0, col: 1},
		{name: "no scrollback", in: "1\r\n2\r\n3\r\n4\x1b[?3l\x1b[H", lines: []string{""}},
	})
	s := New(10, 4, Options{})
	s.Write([]byte("1\r\n2\r\n3\r\n4\x1b[?3l"))
	if n := s.ScrollbackLen(); n != 0 {
		t.Errorf("scrollback has %d lines, want 0", n)
	}
	if cols, rows := s.Size(); cols != 10 || rows != 4 {
		t.Errorf("size %dx%d, want 10x4", cols, rows)
	}
}

func TestModes(t *testing.T) {
	s := New(10, 3, Options{})
	check := func(name string, got, want bool) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("cursor visible", s.CursorVisible(), true)
	s.Write([]byte("\x1b[?25l\x1b[?2004h\x1b[?1h\x1b[?1000h\x1b="))
	check("cursor visible", s.CursorVisible(), false)
	check("bracketed", s.BracketedPaste(), true)
	check("app cursor", s.AppCursorKeys(), true)
	check("app keypad", s.AppKeypad(), true)
	check("mouse", s.PrivateMode(1000), true)
	s.Write([]byte("\x1b[?25h\x1b[?2004l\x1b[?1l\x1b[?1000l\x1b>"))
	check("cursor visible", s.CursorVisible(), true)
	check("bracketed", s.BracketedPaste(), false)
	check("app cursor", s.AppCursorKeys(), false)
	check("app keypad", s.AppKeypad(), false)
	// DECNKM is the same keypad mode.
	s.Write([]byte("\x1b[?66h"))
	check("app keypad after ?66h", s.AppKeypad(), true)
	s.Write([]byte("\x1b[?66l"))
	check("app keypad after ?66l", s.AppKeypad(), false)
	check("mouse", s.PrivateMode(1000), false)
	s.Write([]byte("\x1b[2 q"))
	if s.CursorStyle() != 2 {
		t.Errorf("cursor style %d", s.CursorStyle())
	}
	if seqs, _ := s.Unhandled(); len(seqs) != 0 {
		t.Errorf("tracked modes recorded as unhandled: %v", seqs)
	}
}

func TestAltScreen(t *testing.T) {
	for _, mode := range []string{"47", "1047", "1049"} {
		t.Run(mode, func(t *testing.T) {
			s := New(10, 3, Options{})
			s.Write([]byte("main\x1b[2;3H"))
			s.Write([]byte("\x1b[?" + mode + "h"))
			if !s.AltScreen() {
				t.Fatal("not on alt screen")
			}
			s.Write([]byte("\x1b[HALT"))
			if got := s.Line(1, false); got != "ALT" {
				t.Errorf("alt line 1 = %q", got)
			}
			s.Write([]byte("\x1b[?" + mode + "l"))
			if s.AltScreen() {
				t.Fatal("still on alt screen")
			}
			if got := s.Line(1, false); got != "main" {
				t.Errorf("main line 1 = %q", got)
			}
			r, c := s.Cursor()
			if mode == "1049" && (r != 1 || c != 2) {
				t.Errorf("1049 cursor not restored: %d,%d", r, c)
			}
			if mode != "1049" && (r != 0 || c != 3) {
				t.Errorf("cursor moved: %d,%d", r, c)
			}
			// Entering again: 1049 clears, 47 keeps, 1047 cleared on exit.
			s.Write([]byte("\x1b[?" + mode + "h"))
			want := map[string]string{"47": "ALT", "1047": "", "1049": ""}[mode]
			if got := s.Line(1, false); got != want {
				t.Errorf("alt again line 1 = %q, want %q", got, want)
			}
		})
	}
}

func TestReplies(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"DSR 5", "\x1b[5n", "\x1b[0n"},
		{"CPR", "\x1b[3;4H\x1b[6n", "\x1b[3;4R"},
		{"CPR pending wrap", "\x1b[1;10Hx\x1b[6n", "\x1b[1;10R"},
		{"CPR origin", "\x1b[2;4r\x1b[?6h\x1b[2;1H\x1b[6n", "\x1b[3;1R"},
		{"CPR origin and margins", "\x1b[?69h\x1b[3;8s\x1b[2;4r\x1b[?6h\x1b[2;2H\x1b[6n", "\x1b[3;4R"},
		{"DECXCPR origin", "\x1b[2;4r\x1b[?6h\x1b[2;3H\x1b[?6n", "\x1b[?3;3R"},
		{"DECXCPR", "\x1b[?6n", "\x1b[?1;1R"},
		{"DA1", "\x1b[c", "\x1b[?62;22c"},
		{"DA1 0", "\x1b[0c", "\x1b[?62;22c"},
		{"DA2", "\x1b[>c", "\x1b[>1;10;0c"},
		{"DA2 0", "\x1b[>0c", "\x1b[>1;10;0c"},
		{"DECRQM set", "\x1b[?2004h\x1b[?2004$p", "\x1b[?2004;1$y"},
		{"DECRQM reset", "\x1b[?25l\x1b[?25$p", "\x1b[?25;2$y"},
		{"DECRQM unknown", "\x1b[?4242$p", "\x1b[?4242;0$y"},
		{"two queries", "\x1b[5n\x1b[6n", "\x1b[0n\x1b[1;1R"},
		{"text area size in characters", "\x1b[18t", "\x1b[8;5;10t"},
		{"text area size in pixels unanswered", "\x1b[14t", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(10, 5, Options{})
			s.Write([]byte(tc.in))
			if got := string(s.TakeReplies()); got != tc.want {
				t.Errorf("replies = %q, want %q", got, tc.want)
			}
			if s.TakeReplies() != nil {
				t.Error("replies not drained")
			}
		})
	}
}

func TestCharsets(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "G0 special", in: "\x1b(0lqk\x1b(Bq", lines: []string{"┌─┐q"}, col: 4},
		{name: "G1 with SO SI", in: "\x1b)0a\x0ex\x0fx", lines: []string{"a│x"}, col: 3},
		{name: "ESC c resets charset", in: "\x1b(0\x1bcq", lines: []string{"q"}, col: 1},
		{name: "G2 with LS2", in: "\x1b*0\x1b)0\x0eq\x1bnq\x0fq", lines: []string{"──q"}, col: 3},
		{name: "G3 with LS3, G2 ASCII", in: "\x1b+0\x1b(0\x1boq\x1bnq\x0fq", lines: []string{"─q─"}, col: 3},
		{name: "DECRC restores G2 in use", in: "\x1b*0\x1bn\x1b7\x0f\x1b8q", lines: []string{"─"}, col: 1},
		{name: "DECSTR resets G2", in: "\x1b*0\x1bn\x1b[!pq", lines: []string{"q"}, col: 1},
	})
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"\x1b)0\x0e", "\x1b(B\x1b)0\x0e"},
		{"\x1b*0", "\x1b(B\x1b)B\x1b*0\x1b+B\x0f"},
		{"\x1bo", "\x1b(B\x1b)B\x1b*B\x1b+B\x1bo"},
		{"\x1b+0\x1bn", "\x1b(B\x1b)B\x1b*B\x1b+0\x1bn"},
	} {
		s := New(10, 2, Options{})
		s.Write([]byte(c.in))
		if got := string(s.AppendCharsets(nil)); got != c.want {
			t.Errorf("AppendCharsets after %q = %q, want %q", c.in, got, c.want)
		}
		// What it appends puts a screen at the defaults in the same
		// state.
		r := New(10, 2, Options{})
		r.Write([]byte(c.want))
		if got := string(r.AppendCharsets(nil)); got != c.want {
			t.Errorf("after %q restored: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStrings(t *testing.T) {
	s := New(20, 2, Options{})
	s.Write([]byte("a\x1b]0;first\x07b\x1b]2;second\x1b\\c\x1b]1;icon\x07"))
	s.Write([]byte("\x1bPq#0;1;2\x1b\\d\x1b_apc\x1b\\e\x1b^pm\x1b\\f\x1bXsos\x1b\\g"))
	if got := s.Line(1, false); got != "abcdefg" {
		t.Errorf("line = %q", got)
	}
	if s.Title() != "second" {
		t.Errorf("title = %q", s.Title())
	}
	// Title stack (CSI 22 t / 23 t).
	s.Write([]byte("\x1b[22t\x1b]2;temp\x07\x1b[23t"))
	if s.Title() != "second" {
		t.Errorf("title after pop = %q", s.Title())
	}
	// The icon name's own push and pop (Ps 1) leave the title's stack
	// alone; the title's (Ps 2) use it.
	s.Write([]byte("[22;2t]2;vim[22;1t[23;1t"))
	if s.Title() != "vim" {
		t.Errorf("title after the icon name's pop = %q", s.Title())
	}
	s.Write([]byte("[23;2t"))
	if s.Title() != "second" {
		t.Errorf("title after the title's pop = %q", s.Title())
	}
	// An OSC cut short by a new escape sequence ends there.
	s.Write([]byte("\x1b]2;cut\x1b[2;1HX"))
	if s.Title() != "cut" || s.Line(2, false) != "X" {
		t.Errorf("title %q line %q", s.Title(), s.Line(2, false))
	}
}

func TestResets(t *testing.T) {
	s := New(10, 3, Options{})
	s.Write([]byte("abc\x1b[1;31m\x1b[?25l\x1b[?7l\x1b[4h\x1b[2;3r\x1b]2;t\x07\x1b[?2004h\x1b[?1004h\x1b[?1000h\x1b[!p"))
	if !s.CursorVisible() || !s.AutoWrap() || s.insert || s.top != 0 || s.bottom != 2 || s.pen != (attrs{}) {
		t.Error("DECSTR did not reset modes")
	}
	// As in xterm.js: bracketed paste and focus events go, mouse stays.
	if s.BracketedPaste() || s.PrivateMode(1004) || !s.PrivateMode(1000) {
		t.Errorf("after DECSTR: bracketed paste %v, focus events %v, mouse %v", s.BracketedPaste(), s.PrivateMode(1004), s.PrivateMode(1000))
	}
	if s.Line(1, false) != "abc" || s.Title() != "t" {
		t.Error("DECSTR changed content or title")
	}
	s.Write([]byte("\x1b[22;0t\x1b[?1049h\x1b[?2004hxyz\x1bc"))
	if s.AltScreen() || s.BracketedPaste() || s.Line(1, false) != "" {
		t.Error("RIS did not reset")
	}
	// The title stays, as in xterm; the pushed one is gone.
	if s.Title() != "t" {
		t.Errorf("RIS changed the title to %q", s.Title())
	}
	if s.Write([]byte("\x1b]2;other\x07\x1b[23;0t")); s.Title() != "other" {
		t.Errorf("after RIS: title %q, want \"other\" (no pushed title)", s.Title())
	}
	if r, c := s.Cursor(); r != 0 || c != 0 {
		t.Errorf("RIS cursor %d,%d", r, c)
	}
}

func TestResize(t *testing.T) {
	s := New(10, 4, Options{})
	s.Write([]byte("one\r\ntwo\r\nthree\r\nfour"))
	s.Resize(3, 2)
	if c, r := s.Size(); c != 3 || r != 2 {
		t.Fatalf("size %d,%d", c, r)
	}
	// Reflow: lines longer than the new width wrap instead of being cut.
	if s.Line(1, false) != "fou" || s.Line(2, false) != "r" {
		t.Errorf("lines %q %q", s.Line(1, false), s.Line(2, false))
	}
	if s.ScrollbackLen() != 4 || s.Line(-1, false) != "ee" || s.Line(-2, false) != "thr" {
		t.Errorf("scrollback %d %q", s.ScrollbackLen(), s.Line(-1, false))
	}
	if r, c := s.Cursor(); r != 1 || c != 1 {
		t.Errorf("cursor %d,%d", r, c)
	}
	// One row taller: the newest scrollback line comes back (alacritty).
	s.Resize(6, 3)
	if s.Line(1, false) != "two" || s.Line(2, false) != "three" || s.Line(3, false) != "four" {
		t.Errorf("after grow %q %q %q", s.Line(1, false), s.Line(2, false), s.Line(3, false))
	}
	if r, c := s.Cursor(); r != 2 || c != 4 {
		t.Errorf("cursor after grow %d,%d", r, c)
	}
	s.Write([]byte("\r\nabcdefgh"))
	if s.Line(2, false) != "abcdef" || s.Line(3, false) != "gh" {
		t.Errorf("after grow text %q %q", s.Line(2, false), s.Line(3, false))
	}
	// A wide character that no longer fits wraps whole; tiny sizes clamp to 1.
	s = New(4, 1, Options{})
	s.Write([]byte("ab中"))
	s.Resize(3, 1)
	if got, sb := s.Line(1, false), s.Line(-1, false); got != "中" || sb != "ab" {
		t.Errorf("wrapped wide %q, scrollback %q", got, sb)
	}
	s.Resize(0, -5)
	if c, r := s.Size(); c != 1 || r != 1 {
		t.Errorf("clamped size %d,%d", c, r)
	}
	s.Write([]byte("中xyz\x1b[5@\x1b[9L"))
	if New(0, 0, Options{}).cols != 1 {
		t.Error("New does not clamp")
	}
}

func TestUnhandled(t *testing.T) {
	s := New(10, 2, Options{Unhandled: 2})
	s.Write([]byte("\x1b[?1234h"))
	seqs, dropped := s.Unhandled()
	if len(seqs) != 1 || dropped != 0 {
		t.Fatalf("got %v %d", seqs, dropped)
	}
	if seqs[0].Sequence != `\e[?1234h` || seqs[0].RawHex != "1b5b3f3132333468" {
		t.Errorf("got %+v", seqs[0])
	}
	s.Write([]byte("\x1b[5;6y\x1b#3\x1b]777;x\x07"))
	seqs, dropped = s.Unhandled()
	if len(seqs) != 2 || dropped != 2 {
		t.Fatalf("got %v dropped %d", seqs, dropped)
	}
	if seqs[0].Sequence != `\e#3` || seqs[1].Sequence != `\e]777;x\x07` {
		t.Errorf("got %+v", seqs)
	}
	s.ClearUnhandled()
	if seqs, dropped = s.Unhandled(); len(seqs) != 0 || dropped != 0 {
		t.Errorf("after clear %v %d", seqs, dropped)
	}
	// Split across writes, the sequence is still recorded whole.
	s.Write([]byte("\x1b[>4;"))
	s.Write([]byte("2m"))
	if seqs, _ = s.Unhandled(); len(seqs) != 1 || seqs[0].Sequence != `\e[>4;2m` {
		t.Errorf("split %v", seqs)
	}
	// Default capacity is 10.
	s = New(10, 2, Options{})
	s.Write([]byte(strings.Repeat("\x1b[?999h", 13)))
	if seqs, dropped = s.Unhandled(); len(seqs) != 10 || dropped != 3 {
		t.Errorf("default ring %d %d", len(seqs), dropped)
	}
	// Deliberately ignored sequences are not recorded.
	s.ClearUnhandled()
	s.Write([]byte("\x1b[1;31m\x1b]0;t\x07\x1b[?25l\x1b[?1049h\x1b[?1006h\x1b=\x1b(B\x1b[2 q\x1b[!p\x1b%G"))
	if seqs, _ = s.Unhandled(); len(seqs) != 0 {
		t.Errorf("ignored sequences recorded: %v", seqs)
	}
}

// TestSplitAnywhere feeds a stream of every family one byte at a time and
// in one piece: the results must match.
func TestSplitAnywhere(t *testing.T) {
	in := []byte("héllo 中文 😀\x1b[1;38;2;1;2;3mX\x1b[0m\x1b]2;title\x1b\\\x1b[2;5r\x1b[3;4H\x1bM\x1b(0q\x1b(B\x1b[6n e\u0301")
	a, b := New(20, 6, Options{}), New(20, 6, Options{})
	a.Write(in)
	for i := range in {
		b.Write(in[i : i+1])
	}
	if describe(a) != describe(b) || allANSI(a) != allANSI(b) || string(a.TakeReplies()) != string(b.TakeReplies()) {
		t.Errorf("byte-at-a-time differs:\n%s\n%s", describe(a), describe(b))
	}
}

func TestRuneWidth(t *testing.T) {
	cases := map[rune]int{
		'a': 1, 'é': 1, '\u0301': 0, '\u200d': 0, '\ufe0f': 0, '中': 2, '한': 2,
		'😀': 2, '🚀': 2, 'Ａ': 2, '─': 1, '│': 1, 'π': 1, '\x00': 0, '\x7f': 0,
		'\u00ad': 1, 0x20000: 2, '\u3000': 2, 'ー': 2, '\u0915': 1, '\u094d': 0,
	}
	for r, w := range cases {
		if got := RuneWidth(r); got != w {
			t.Errorf("RuneWidth(%U) = %d, want %d", r, got, w)
		}
	}
}

// TestGraphemeClusters checks that a cell holds a whole cluster (UAX #29)
// and that widths follow glibc's wcwidth, as alacritty and xterm.js do: a
// ZWJ sequence is as wide as its emoji together (each emoji in cells of
// its own, the joiner with the one before it), a regional-indicator pair
// is two cells, VS16 does not widen, and an emoji modifier takes two cells
// of its own.
func TestGraphemeClusters(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "emoji modifier is 2+2", in: "👍🏽x", lines: []string{"👍🏽x"}, col: 5},
		{name: "ZWJ family is three wide cells", in: "a👨\u200d👩\u200d👧b", lines: []string{"a👨\u200d👩\u200d👧b"}, col: 8},
		{name: "ZWJ profession", in: "👩\u200d💻x", lines: []string{"👩\u200d💻x"}, col: 5},
		{name: "ZWJ with a narrow second", in: "🏳\ufe0f\u200d🌈x", lines: []string{"🏳\ufe0f\u200d🌈x"}, col: 4},
		{name: "ZWJ sequence wraps emoji by emoji", cols: 5, rows: 3, in: "ab👨\u200d👩\u200d👧", lines: []string{"ab👨\u200d", "👩\u200d👧"}, row: 1, col: 4},
		{name: "SGR inside a ZWJ sequence", in: "👨\u200d\x1b[1m👩x", lines: []string{"👨\u200d👩x"}, col: 5},
		{name: "flag is two cells", in: "🇩🇪x", lines: []string{"🇩🇪x"}, col: 3},
		{name: "two flags", in: "🇩🇪🇫🇷x", lines: []string{"🇩🇪🇫🇷x"}, col: 5},
		{name: "lone regional indicator", in: "🇩x", lines: []string{"🇩x"}, col: 2},
		{name: "VS16 keeps text width", in: "❤\ufe0fx", lines: []string{"❤\ufe0fx"}, col: 2},
		{name: "VS15", in: "❤\ufe0ex", lines: []string{"❤\ufe0ex"}, col: 2},
		{name: "two combining marks", in: "e\u0301\u0302x", lines: []string{"e\u0301\u0302x"}, col: 2},
		{name: "spacing mark widens the cluster", in: "क\u093ex", lines: []string{"क\u093ex"}, col: 3},
		{name: "Hangul jamo compose", in: "\u1100\u1161\u11a8x", lines: []string{"\u1100\u1161\u11a8x"}, col: 3},
		{name: "flag fits at the margin", in: "12345678🇩🇪x", lines: []string{"12345678🇩🇪", "x"}, row: 1, col: 1},
		{name: "flag cannot grow past the margin", in: "123456789🇩🇪x", lines: []string{"123456789🇩", "🇪x"}, row: 1, col: 2},
		{name: "modifier after a wrap", in: "123456789👍🏽", lines: []string{"123456789", "👍🏽"}, row: 1, col: 4},
		{name: "no cluster across a cursor move", in: "👍\x1b[1C🏽x", lines: []string{"👍 🏽x"}, col: 6},
		{name: "overwriting a flag removes it whole", in: "🇩🇪\rx", lines: []string{"x"}, col: 1},
		{name: "DCH removes a ZWJ sequence emoji by emoji", in: "👩\u200d💻x\r\x1b[2P", lines: []string{"💻x"}},
		{name: "ICH moves a cluster whole", in: "e\u0301x\r\x1b[@", lines: []string{" e\u0301x"}},
		{name: "IRM makes room for a widening cluster", in: "ab\r\x1b[4h🇩🇪\x1b[4l", lines: []string{"🇩🇪ab"}, col: 2},
	})
}

// TestMouseTrackingOneAtATime: as in xterm and xterm.js, a mouse
// protocol replaces the one on, and resetting any turns reporting off;
// the encoding is apart.
func TestMouseTrackingOneAtATime(t *testing.T) {
	for _, c := range []struct {
		in string
		on []int
	}{
		{"\x1b[?1000h\x1b[?1002h", []int{1002}},
		{"\x1b[?1000h\x1b[?1003l", nil},
		{"\x1b[?1003h\x1b[?9h\x1b[?1006h", []int{9, 1006}},
		{"\x1b[?1002h\x1b[?1006h\x1b[?1000l", []int{1006}},
	} {
		s := New(10, 2, Options{})
		s.Write([]byte(c.in))
		var on []int
		for _, m := range []int{9, 1000, 1002, 1003, 1006} {
			if s.PrivateMode(m) {
				on = append(on, m)
			}
		}
		if fmt.Sprint(on) != fmt.Sprint(c.on) {
			t.Errorf("after %q: modes %v on, want %v", c.in, on, c.on)
		}
	}
}
