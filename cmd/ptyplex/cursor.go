//go:build unix

package main

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/screen"
)

// Inverse video around the cursor cell, and closing it again.
const (
	inverseOn  = "\x1b[7m"
	inverseOff = "\x1b[27m"
)

// markCursor wraps the character that covers display column col of line
// (plain or with ANSI escapes) in inverse video. A wide character covers
// two columns; combining marks stay with their base. When the line ends
// before col (trailing blanks are trimmed), it is padded with spaces and
// the cursor shows as an inverse space.
func markCursor(line string, col int) string {
	var b strings.Builder
	b.Grow(len(line) + 16)
	x := 0 // display column of the next character
	for i := 0; i < len(line); {
		if line[i] == 0x1b {
			n := escapeLen(line[i:])
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		w := cellWidth(r)
		// The cluster: this rune and the zero-width runes that follow it.
		end := i + size
		for end < len(line) && line[end] != 0x1b {
			r2, s2 := utf8.DecodeRuneInString(line[end:])
			if cellWidth(r2) != 0 {
				break
			}
			end += s2
		}
		if w > 0 && x <= col && col < x+w {
			b.WriteString(inverseOn)
			b.WriteString(line[i:end])
			b.WriteString(inverseOff)
			b.WriteString(line[end:])
			return b.String()
		}
		b.WriteString(line[i:end])
		x += w
		i = end
	}
	if x <= col {
		b.WriteString(strings.Repeat(" ", col-x))
		b.WriteString(inverseOn + " " + inverseOff)
	}
	return b.String()
}

// escapeLen returns the length of the escape sequence at the start of s:
// CSI (ESC [ ... final byte), OSC/DCS/APC strings (ended by BEL or ESC \),
// or a two-byte ESC sequence.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for j := 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^':
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	return 2
}

// cellWidth is the number of cells r takes, as the emulator that drew the
// screen decides it: we ask a scratch screen where the cursor ends up,
// rather than keep a second width table that could disagree with it.
func cellWidth(r rune) int {
	if r >= 0x20 && r < 0x7f {
		return 1
	}
	widths.Lock()
	defer widths.Unlock()
	if w, ok := widths.cache[r]; ok {
		return w
	}
	if widths.scr == nil {
		widths.scr = screen.New(8, 1, screen.Options{Scrollback: -1})
		widths.cache = map[rune]int{}
	}
	widths.scr.Write([]byte("\r\x1b[2Ka" + string(r)))
	_, c := widths.scr.Cursor()
	w := max(c-1, 0)
	widths.cache[r] = w
	return w
}

var widths struct {
	sync.Mutex
	scr   *screen.Screen
	cache map[rune]int
}
