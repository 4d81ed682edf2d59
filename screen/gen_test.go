package screen

import (
	"fmt"
	"math/rand"
	"strings"
)

// twinStream is a generated stream in two spellings: the one the screen
// is fed, and the one the reference emulators (xterm.js, tmux) are fed.
// They are the same bytes except where the screen deliberately differs
// from the references, which is spelled out for them as what the screen
// must show (see genStream's REP after SGR).
type twinStream struct{ ours, ref strings.Builder }

func (w *twinStream) Write(p []byte) (int, error) {
	w.ours.Write(p)
	return w.ref.Write(p)
}

func (w *twinStream) WriteString(s string) { w.ours.WriteString(s); w.ref.WriteString(s) }
func (w *twinStream) WriteByte(c byte) error {
	w.ours.WriteByte(c)
	return w.ref.WriteByte(c)
}

// genStream builds a pseudo-random byte stream of the sequences programs
// commonly send (text in several scripts, cursor motion, erasing,
// insert/delete, scroll regions, SGR, save/restore, insert and autowrap
// modes, the alternate screen, REP right after a character and REP with
// controls or sequences in between), for the differential test. The same seed
// always gives the same stream.
func genStream(seed int64, cols, rows int) []byte {
	ours, _ := genTwinStreams(seed, cols, rows)
	return ours
}

// genTwinStreams is genStream with the references' spelling beside it.
// The two differ only at REP after SGR: the screen keeps the character
// across SGR (interminai's rule, which scripts written for it rely on),
// xterm.js and tmux forget it, so their stream has the repeats written
// out as the characters themselves, after the SGR: what the screen must
// show.
func genTwinStreams(seed int64, cols, rows int) (ours, ref []byte) {
	rng := rand.New(rand.NewSource(seed))
	var b twinStream
	words := []string{"hello", "world", "ls", "-la", "foo.go", "|", "a", "0123456789", "the quick brown fox"}
	wide := []string{"中", "文", "日本語", "한국", "ｆｕｌｌ", "😀", "🎉"}
	marks := []string{"e\u0301", "n\u0303", "a\u0308\u0304"}
	// Controls and sequences that may sit between a character and REP.
	between := []string{"", "", "\r", "\n", "\b", "\t", "\x1b[31m", "\x1b[m", "\x1b[C", "\x1b[K",
		"\x1bD", "\x1b[?7h", "\x1b[4l", "\x1b]0;t\x07", "\x1b7", "\x1b[b"}
	n := 10 + rng.Intn(50)
	num := func(hi int) int { return 1 + rng.Intn(hi) }
	for i := 0; i < n; i++ {
		switch k := rng.Intn(100); {
		case k < 25:
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(2) == 0 {
				b.WriteByte(' ')
			}
		case k < 31:
			b.WriteString(wide[rng.Intn(len(wide))])
		case k < 33:
			b.WriteString(marks[rng.Intn(len(marks))])
		case k < 38:
			b.WriteString("\r\n")
		case k < 40:
			b.WriteString([]string{"\r", "\n", "\b", "\t", "\b\b"}[rng.Intn(5)])
		case k < 50:
			fmt.Fprintf(&b, "\x1b[%d;%dH", num(rows+2), num(cols+2))
		case k < 55:
			fmt.Fprintf(&b, "\x1b[%d%c", num(5), "ABCDEFGd`"[rng.Intn(9)])
		case k < 59:
			fmt.Fprintf(&b, "\x1b[%dJ", rng.Intn(3))
		case k < 64:
			fmt.Fprintf(&b, "\x1b[%dK", rng.Intn(3))
		case k < 67:
			fmt.Fprintf(&b, "\x1b[%dX", num(8))
		case k < 71:
			fmt.Fprintf(&b, "\x1b[%d@", num(6))
		case k < 75:
			fmt.Fprintf(&b, "\x1b[%dP", num(6))
		case k < 78:
			fmt.Fprintf(&b, "\x1b[%d%c", num(3), "LM"[rng.Intn(2)])
		case k < 80:
			fmt.Fprintf(&b, "\x1b[%d%c", num(3), "ST"[rng.Intn(2)])
		case k < 83:
			top := num(rows)
			fmt.Fprintf(&b, "\x1b[%d;%dr", top, top+rng.Intn(rows))
		case k < 84:
			b.WriteString("\x1b[r")
		case k < 86:
			b.WriteString([]string{"\x1bM", "\x1bD", "\x1bE"}[rng.Intn(3)])
		case k < 90:
			fmt.Fprintf(&b, "\x1b[%d;%dm", []int{0, 1, 4, 7}[rng.Intn(4)], 30+rng.Intn(8))
		case k < 92:
			b.WriteString([]string{"\x1b7", "\x1b8"}[rng.Intn(2)])
		case k < 94:
			b.WriteString([]string{"\x1b[4h", "\x1b[4l"}[rng.Intn(2)])
		case k < 96:
			b.WriteString([]string{"\x1b[?7l", "\x1b[?7h"}[rng.Intn(2)])
		case k < 98:
			b.WriteString([]string{"\x1b[?1049h", "\x1b[?1049l"}[rng.Intn(2)])
		case k < 99:
			fmt.Fprintf(&b, "x\x1b[%db", num(10))
		default:
			// REP with something between it and the character: it must
			// then repeat nothing, unless that is SGR only. The character
			// may be wide or combined.
			c := []string{"y", "中", "e\u0301", "😀"}[rng.Intn(4)]
			mid := between[rng.Intn(len(between))]
			reps := num(6)
			b.WriteString(c + mid)
			fmt.Fprintf(&b.ours, "\x1b[%db", reps)
			if isSGRString(mid) {
				b.ref.WriteString(strings.Repeat(c, reps))
			} else {
				fmt.Fprintf(&b.ref, "\x1b[%db", reps)
			}
		}
	}
	return []byte(b.ours.String()), []byte(b.ref.String())
}

// isSGRString tells the between-strings that are one plain SGR.
func isSGRString(s string) bool {
	return strings.HasPrefix(s, "\x1b[") && strings.HasSuffix(s, "m") && strings.Trim(s[2:len(s)-1], "0123456789;") == ""
}
