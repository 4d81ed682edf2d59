package session

import (
	"strings"

	"github.com/ptyplex/ptyplex/session/wire"
)

// lineRange resolves an OUTPUT range to effective bounds in the protocol's
// numbering (-avail..-1 scrollback, 1..rows screen, no line 0). from 0 or
// unset means screen line 1; to unset means the last screen line, 0 the
// boundary (scrollback only). Bounds beyond what exists are clamped; an
// empty range has from > to.
func lineRange(from int, fromSet, fromOldest bool, to int, toSet bool, avail, rows int) (int, int) {
	f := 1
	switch {
	case fromOldest:
		f = -avail
	case fromSet:
		f = max(from, -avail)
	}
	if f == 0 {
		f = 1
	}
	t := rows
	if toSet {
		t = min(to, rows)
		if t == 0 {
			t = -1
		}
	}
	return f, t
}

func (d *Daemon) output(f wire.Fields) (any, error) {
	format, _, err := f.Str("format")
	if err != nil {
		return nil, err
	}
	var ansi bool
	switch format {
	case "", "ascii", "text", "plain", "json": // json: interminai answered it as ascii
	case "ansi":
		ansi = !d.cfg.Plain // --emulator custom: plain text everywhere
	default:
		return nil, wire.Invalidf("unknown format %q (expected \"ascii\" or \"ansi\")", format)
	}
	from, fromSet, oldest, err := f.LineNumber("from", true)
	if err != nil {
		return nil, err
	}
	to, toSet, _, err := f.LineNumber("to", false)
	if err != nil {
		return nil, err
	}
	withGen, err := f.Bool("with_gen")
	if err != nil {
		return nil, err
	}

	st := d.st
	st.mu.Lock()
	defer st.mu.Unlock()
	cols, rows := st.scr.Size()
	avail := st.scr.ScrollbackLen()
	lo, hi := lineRange(from, fromSet, oldest, to, toSet, avail, rows)
	var b strings.Builder
	for n := lo; n <= hi; n++ {
		if n == 0 {
			continue
		}
		b.WriteString(st.scr.Line(n, ansi))
		b.WriteByte('\n')
	}
	row, col := st.scr.Cursor()
	var gen *int64
	if withGen {
		g := st.gen
		gen = &g
	}
	return wire.OutputData{
		OutputGen:           gen,
		Screen:              b.String(),
		Cursor:              wire.Cursor{Row: row, Col: col},
		Size:                wire.Size{Rows: rows, Cols: cols},
		From:                lo,
		To:                  hi,
		ScrollbackAvailable: avail,
		ScrollbackCapacity:  st.scr.ScrollbackCap(),
	}, nil
}
