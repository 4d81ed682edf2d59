package screen_test

import (
	"testing"

	"github.com/ptyplex/ptyplex/screen"
)

func col(r, g, b uint8, idx int16) screen.Color {
	return screen.Color{R: r, G: g, B: b, Index: idx}
}

var (
	defFG = screen.Color{R: 0xff, G: 0xff, B: 0xff, Default: true, Index: -1}
	defBG = screen.Color{Default: true, Index: -1}
)

// TestCellsColors checks that each colour form a program can send comes
// back resolved to the RGB a terminal with xterm's palette shows, with
// the palette index kept and the defaults flagged.
func TestCellsColors(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		fg, bg screen.Color
	}{
		{"default", "x", defFG, defBG},
		{"16 red on green", "\x1b[31;42mx", col(0xcd, 0, 0, 1), col(0, 0xcd, 0, 2)},
		{"16 bright", "\x1b[91;104mx", col(0xff, 0, 0, 9), col(0x5c, 0x5c, 0xff, 12)},
		{"256 cube", "\x1b[38;5;196;48;5;21mx", col(0xff, 0, 0, 196), col(0, 0, 0xff, 21)},
		{"256 cube mid", "\x1b[38;5;67mx", col(0x5f, 0x87, 0xaf, 67), defBG},
		{"256 grey", "\x1b[48;5;244mx", defFG, col(0x80, 0x80, 0x80, 244)},
		{"true colour", "\x1b[38;2;1;2;3;48;2;250;251;252mx", col(1, 2, 3, -1), col(250, 251, 252, -1)},
		{"palette changed by OSC 4", "\x1b]4;1;#102030\x07\x1b[31mx", col(0x10, 0x20, 0x30, 1), defBG},
		{"defaults changed by OSC 10/11", "\x1b]10;#aabbcc\x07\x1b]11;#010203\x07x",
			screen.Color{R: 0xaa, G: 0xbb, B: 0xcc, Default: true, Index: -1},
			screen.Color{R: 1, G: 2, B: 3, Default: true, Index: -1}},
		{"reset", "\x1b[31;42m\x1b[0mx", defFG, defBG},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := screen.New(4, 2, screen.Options{})
			s.Write([]byte(tc.in))
			cells := s.Cells(1, nil)
			if len(cells) != 4 {
				t.Fatalf("got %d cells, want 4", len(cells))
			}
			c := cells[0]
			if c.Text != "x" || c.Width != 1 {
				t.Errorf("cell text %q width %d, want \"x\" 1", c.Text, c.Width)
			}
			if c.FG != tc.fg {
				t.Errorf("fg %+v, want %+v", c.FG, tc.fg)
			}
			if c.BG != tc.bg {
				t.Errorf("bg %+v, want %+v", c.BG, tc.bg)
			}
		})
	}
}

func TestCellsAttrs(t *testing.T) {
	cases := []struct {
		sgr  string
		want screen.Attr
	}{
		{"1", screen.AttrBold},
		{"2", screen.AttrFaint},
		{"3", screen.AttrItalic},
		{"4", screen.AttrUnderline},
		{"5", screen.AttrBlink},
		{"7", screen.AttrInverse},
		{"8", screen.AttrHidden},
		{"9", screen.AttrStrike},
		{"1;4;7", screen.AttrBold | screen.AttrUnderline | screen.AttrInverse},
		{"1;22", 0},
	}
	for _, tc := range cases {
		t.Run(tc.sgr, func(t *testing.T) {
			s := screen.New(4, 2, screen.Options{})
			s.Write([]byte("\x1b[" + tc.sgr + "mx\x1b[0my"))
			cells := s.Cells(1, nil)
			if got := cells[0].Attrs; got != tc.want {
				t.Errorf("attrs %b, want %b", got, tc.want)
			}
			if !cells[0].Attrs.Has(tc.want) {
				t.Errorf("Has(%b) false for %b", tc.want, cells[0].Attrs)
			}
			if got := cells[1].Attrs; got != 0 {
				t.Errorf("after SGR 0: attrs %b, want none", got)
			}
		})
	}
}

func TestCellsText(t *testing.T) {
	s := screen.New(8, 2, screen.Options{})
	// A wide character, a base with a combining acute, then a wide
	// character whose right half is overwritten (a broken half).
	s.Write([]byte("中e\u0301文\x1b[1;5HZ"))
	cells := s.Cells(1, nil)
	want := []struct {
		text  string
		width int
	}{{"中", 2}, {"", 0}, {"e\u0301", 1}, {"", 1}, {"Z", 1}, {"", 1}, {"", 1}, {"", 1}}
	if len(cells) != len(want) {
		t.Fatalf("got %d cells, want %d", len(cells), len(want))
	}
	for i, w := range want {
		if cells[i].Text != w.text || cells[i].Width != w.width {
			t.Errorf("cell %d: %q width %d, want %q width %d", i, cells[i].Text, cells[i].Width, w.text, w.width)
		}
	}
}

func TestCellsRanges(t *testing.T) {
	s := screen.New(5, 2, screen.Options{})
	s.Write([]byte("one\r\ntwo\r\n\x1b[32mthree"))
	if got := s.ScrollbackLen(); got != 1 {
		t.Fatalf("scrollback %d lines, want 1", got)
	}
	text := func(n int) string {
		var b []byte
		for _, c := range s.Cells(n, nil) {
			if c.Text == "" {
				b = append(b, ' ')
			}
			b = append(b, c.Text...)
		}
		return string(b)
	}
	for n, want := range map[int]string{-1: "one  ", 1: "two  ", 2: "three"} {
		if got := text(n); got != want {
			t.Errorf("line %d: %q, want %q", n, got, want)
		}
	}
	// The trimmed scrollback line comes back padded with default cells.
	if c := s.Cells(-1, nil)[4]; c.FG != defFG || c.BG != defBG || c.Text != "" {
		t.Errorf("padding cell %+v, want a default blank", c)
	}
	if c := s.Cells(2, nil)[0]; c.FG.Index != 2 {
		t.Errorf("line 2 fg %+v, want palette 2", c.FG)
	}
	for _, n := range []int{0, 3, -2} {
		if got := s.Cells(n, make([]screen.Cell, 3)); len(got) != 0 {
			t.Errorf("line %d: %d cells, want none", n, len(got))
		}
	}
	// dst is reused.
	buf := make([]screen.Cell, 0, 10)
	if got := s.Cells(1, buf); &got[0] != &buf[:1][0] {
		t.Error("Cells did not reuse dst")
	}
}

func TestDefaultColors(t *testing.T) {
	s := screen.New(4, 2, screen.Options{})
	fg, bg, cur := s.DefaultColors()
	if fg != defFG || bg != defBG || cur != defFG {
		t.Errorf("defaults %+v %+v %+v", fg, bg, cur)
	}
	s.Write([]byte("\x1b]12;#00ff00\x07"))
	if _, _, cur := s.DefaultColors(); cur != (screen.Color{G: 0xff, Default: true, Index: -1}) {
		t.Errorf("cursor colour after OSC 12: %+v", cur)
	}
}
