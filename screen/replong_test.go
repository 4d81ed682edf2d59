package screen

import (
	"fmt"
	"strings"
	"testing"
)

// A REP longer than the screen leaves the screen, the cursor and a pending
// wrap as the same characters written out would: it used to stop after a
// screenful, so the cursor (and the text of a partly written last row)
// ended elsewhere. Only the scrollback may hold fewer of the repeated rows.
func TestLongREPMatchesText(t *testing.T) {
	setups := []struct{ name, in string }{
		{"plain", ""},
		{"region", "\x1b[2;4r\x1b[3;1H"},
		{"below the region", "\x1b[1;2r\x1b[5;3H"},
		{"origin", "\x1b[2;4r\x1b[?6h\x1b[2;2H"},
		{"margins", "\x1b[?69h\x1b[3;7s\x1b[2;4H"},
		{"autowrap off", "\x1b[?7l\x1b[2;2H"},
		{"insert", "\x1b[4h" + strings.Repeat("z", 30) + "\x1b[1;1H"},
		{"pen", "\x1b[1;7;41m"},
	}
	chars := []string{"a", "中", "e\u0301", "\x1b(0q"}
	for _, size := range [][2]int{{10, 5}, {7, 3}, {9, 4}} {
		for _, su := range setups {
			for _, ch := range chars {
				for _, n := range []int{1, 49, 50, 101, 149, 997, 4096, 65535} {
					// The largest count, written out, is most of the
					// test's time under the race detector (78 s for
					// every case): one size and one character check it
					// in every setup; 4096 is already many screenfuls
					// for all of them.
					if n == 65535 && (size != [2]int{10, 5} || ch != "a") {
						continue
					}
					name := fmt.Sprintf("%dx%d/%s/%q/%d", size[0], size[1], su.name, ch, n)
					rep := New(size[0], size[1], Options{})
					rep.Write([]byte(su.in + "X" + ch + fmt.Sprintf("\x1b[%db", n)))
					text := New(size[0], size[1], Options{})
					written := strings.Repeat(ch, n+1)
					if designate, glyph, ok := strings.Cut(ch, "\x1b(0"); ok {
						written = designate + "\x1b(0" + strings.Repeat(glyph, n+1)
					}
					text.Write([]byte(su.in + "X" + written))
					for r := 1; r <= size[1]; r++ {
						if got, want := rep.Line(r, true), text.Line(r, true); got != want {
							t.Fatalf("%s: line %d = %q, written out %q", name, r, got, want)
						}
					}
					gr, gc := rep.Cursor()
					wr, wc := text.Cursor()
					if gr != wr || gc != wc || rep.PendingWrap() != text.PendingWrap() {
						t.Fatalf("%s: cursor %d,%d (wrap pending %v), written out %d,%d (%v)", name, gr, gc, rep.PendingWrap(), wr, wc, text.PendingWrap())
					}
				}
			}
		}
	}
}
