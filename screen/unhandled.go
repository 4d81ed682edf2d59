package screen

import (
	"encoding/hex"
	"strings"
)

// Unhandled is an escape sequence the emulator received but did not act
// on, as readable text (ESC as \e, other control bytes as \xHH) and as
// lowercase hex of the raw bytes.
type Unhandled struct {
	Sequence string
	RawHex   string
}

// maxRecorded bounds how much of one sequence is kept: a runaway DCS
// payload should not fill memory, and the head identifies it anyway.
const maxRecorded = 256

// unhandledRing keeps the raw bytes of the most recent unhandled
// sequences. Formatting waits until someone asks (a DEBUG request), and
// slots are reused, so a program that keeps sending an unknown sequence
// costs no allocation per sequence.
type unhandledRing struct {
	capacity int
	items    [][]byte // ring storage, len <= capacity
	head     int      // oldest item once the ring is full
	dropped  int
}

func (u *unhandledRing) add(raw []byte) {
	if len(raw) > maxRecorded {
		raw = raw[:maxRecorded]
	}
	if len(u.items) < u.capacity {
		u.items = append(u.items, append([]byte(nil), raw...))
		return
	}
	u.items[u.head] = append(u.items[u.head][:0], raw...)
	u.head = (u.head + 1) % len(u.items)
	u.dropped++
}

// each calls f for the recorded sequences, oldest first.
func (u *unhandledRing) each(f func(raw []byte)) {
	for i := range u.items {
		f(u.items[(u.head+i)%len(u.items)])
	}
}

// readable renders raw bytes the way the session protocol shows them.
func readable(raw []byte) string {
	var b strings.Builder
	for _, c := range raw {
		switch {
		case c == 0x1b:
			b.WriteString(`\e`)
		case c < 0x20 || c >= 0x7f:
			const digits = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(digits[c>>4])
			b.WriteByte(digits[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Unhandled returns the recorded unhandled sequences, oldest first, and
// how many older ones were dropped because the ring was full.
func (s *Screen) Unhandled() (seqs []Unhandled, dropped int) {
	out := make([]Unhandled, 0, len(s.unknown.items))
	s.unknown.each(func(raw []byte) {
		out = append(out, Unhandled{Sequence: readable(raw), RawHex: hex.EncodeToString(raw)})
	})
	return out, s.unknown.dropped
}

// ClearUnhandled empties the ring and resets the dropped count.
func (s *Screen) ClearUnhandled() {
	s.unknown.items = s.unknown.items[:0]
	s.unknown.head = 0
	s.unknown.dropped = 0
}

// recordUnhandled notes the sequence currently held by the parser.
func (s *Screen) recordUnhandled() {
	s.unknown.add(s.seq.Raw)
}
