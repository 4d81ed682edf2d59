//go:build unix

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
	case "png": // a ptyplex addition: the screen as an image (screenshot.go)
		return d.outputPNG(f)
	default:
		return nil, wire.Invalidf("unknown format %q (expected \"ascii\", \"ansi\" or \"png\")", format)
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
	wantToken, err := f.Bool("changes")
	if err != nil {
		return nil, err
	}
	since, hasSince, err := f.Str("since")
	if err != nil {
		return nil, err
	}
	maxChars, hasBudget, err := f.Int("max_chars")
	if err != nil {
		return nil, err
	}
	if hasBudget && maxChars < 1 {
		return nil, wire.Invalidf("field 'max_chars' must be at least 1")
	}
	if !hasBudget {
		maxChars = 0
	}

	st := d.st
	st.mu.Lock()
	defer st.mu.Unlock()
	cols, rows := st.scr.Size()
	avail := st.scr.ScrollbackLen()
	out := wire.OutputData{
		Cursor:              cursorOf(st.scr.Cursor()),
		Size:                wire.Size{Rows: rows, Cols: cols},
		ScrollbackAvailable: avail,
		ScrollbackCapacity:  st.scr.ScrollbackCap(),
	}
	if withGen {
		g, n := st.gen, st.scr.ScrolledOff()
		out.OutputGen, out.ScrolledOff = &g, &n
	}
	if hasSince {
		rng := outputRange{from, fromSet, oldest, to, toSet}
		if err := d.changesAnswer(&out, since, ansi, rng, maxChars); err != nil {
			return nil, err
		}
		return out, nil
	}
	lo, hi := lineRange(from, fromSet, oldest, to, toSet, avail, rows)
	if !wantToken && maxChars == 0 {
		// The plain read, as interminai answers it: nothing is kept.
		var b strings.Builder
		for n := lo; n <= hi; n++ {
			if n == 0 {
				continue
			}
			b.WriteString(st.scr.Line(n, ansi))
			b.WriteByte('\n')
		}
		out.Screen, out.From, out.To = b.String(), lo, hi
		if toSet && to == 0 {
			out.To = 0 // the boundary asked for, named as interminai names it
		}
		return out, nil
	}
	var nums []int
	var texts []string
	for n := lo; n <= hi; n++ {
		if n != 0 {
			nums = append(nums, n)
			texts = append(texts, st.scr.Line(n, ansi))
		}
	}
	if maxChars > 0 {
		// Blank rows under the last text are not sent: the answer's "to"
		// is its last row, and nothing of the budget goes to empty lines.
		if b := wire.TrailingBlank(texts); b > 0 {
			nums, texts = nums[:len(nums)-b], texts[:len(texts)-b]
		}
		w := wire.BudgetWindow(texts, wire.Anchor(nums, out.Cursor.Row+1), maxChars)
		if w.Top > 0 {
			out.Cut = &wire.Cut{Lines: w.Top, Chars: w.TopChars, From: nums[0], To: nums[w.Top-1]}
		}
		if w.Bottom > 0 {
			out.CutBelow = &wire.Cut{Lines: w.Bottom, Chars: w.BottomChars, From: nums[len(nums)-w.Bottom], To: nums[len(nums)-1]}
		}
		nums, texts = nums[w.Top:len(nums)-w.Bottom], texts[w.Top:len(texts)-w.Bottom]
		if len(nums) > 0 {
			lo, hi = nums[0], nums[len(nums)-1]
		} else {
			if out.Cut != nil {
				lo = out.Cut.To + 1
				if lo == 0 {
					lo = 1
				}
			}
			hi = lo - 1
		}
	}
	out.Screen, out.From, out.To = strings.Join(texts, "\n"), lo, hi
	if len(texts) > 0 {
		out.Screen += "\n"
	}
	if wantToken {
		v := d.viewLocked(ansi)
		s := v.snapshot()
		for i, n := range nums {
			if n >= 1 {
				s.seen[n-1] = d.reads.hash(texts[i])
			}
		}
		out.Token = d.reads.issue(s)
	}
	return out, nil
}

func cursorOf(row, col int) wire.Cursor { return wire.Cursor{Row: row, Col: col} }

// outputRange is an OUTPUT's from/to as requested, before resolving.
type outputRange struct {
	from            int
	fromSet, oldest bool
	to              int
	toSet           bool
}

// viewLocked captures the screen for a changes read; st.mu must be held.
func (d *Daemon) viewLocked(ansi bool) *view {
	scr := d.st.scr
	cols, rows := scr.Size()
	v := &view{
		cols: cols, rows: rows, ansi: ansi, alt: scr.AltScreen(),
		scrolledOff: scr.ScrolledOff(), avail: scr.ScrollbackLen(), capacity: scr.ScrollbackCap(),
		cursor: cursorOf(scr.Cursor()), rowText: make([]string, rows),
	}
	for r := 1; r <= rows; r++ {
		v.rowText[r-1] = scr.Line(r, ansi)
	}
	return v
}

// snapshot is a snapshot of v with no row given yet.
func (v *view) snapshot() *snapshot {
	return &snapshot{
		cols: v.cols, rows: v.rows, ansi: v.ansi, alt: v.alt,
		scrolledOff: v.scrolledOff, avail: v.avail, cursor: v.cursor,
		seen: make([]uint64, v.rows),
	}
}

// changesAnswer fills out with what changed since the token; st.mu must be
// held. The range bounds what is reported: by default the new scrollback
// lines and the whole screen.
func (d *Daemon) changesAnswer(out *wire.OutputData, since string, ansi bool, rng outputRange, maxChars int) error {
	old, err := d.reads.lookup(since)
	if err != nil {
		return err
	}
	scr := d.st.scr
	v := d.viewLocked(ansi)
	df := d.reads.changesSince(old, v, func(n int) string { return scr.Line(n, ansi) })

	lo, hi := 1, v.rows
	if keep := df.scrolled - df.lost; keep > 0 {
		lo = -keep
	}
	if rng.fromSet || rng.toSet {
		flo, fhi := lineRange(rng.from, rng.fromSet, rng.oldest, rng.to, rng.toSet, v.avail, v.rows)
		if rng.fromSet {
			lo = max(lo, flo)
		}
		hi = fhi
	}
	lines := df.lines[:0:0]
	for _, l := range df.lines {
		if l.N >= lo && l.N <= hi {
			lines = append(lines, l)
		}
	}
	if maxChars > 0 {
		texts := make([]string, len(lines))
		for i, l := range lines {
			texts[i] = l.Text
		}
		nums := make([]int, len(lines))
		for i, l := range lines {
			nums[i] = l.N
		}
		w := wire.BudgetWindow(texts, wire.Anchor(nums, out.Cursor.Row+1), maxChars)
		if w.Top > 0 {
			out.Cut = &wire.Cut{Lines: w.Top, Chars: w.TopChars, From: lines[0].N, To: lines[w.Top-1].N}
		}
		if w.Bottom > 0 {
			out.CutBelow = &wire.Cut{Lines: w.Bottom, Chars: w.BottomChars, From: lines[len(lines)-w.Bottom].N, To: lines[len(lines)-1].N}
		}
		lines = lines[w.Top : len(lines)-w.Bottom]
	}

	// The new token knows a row when the client now has it: it was sent,
	// or it is unchanged from a copy the client already had.
	s := v.snapshot()
	for r := 1; r <= v.rows; r++ {
		if p := df.prev[r-1]; p != 0 && p == df.cur[r-1] {
			s.seen[r-1] = p
		}
	}
	for _, l := range lines {
		if l.N >= 1 {
			s.seen[l.N-1] = df.cur[l.N-1]
		}
	}
	for _, m := range df.moves {
		for i := range m.Rows {
			s.seen[m.To+i-1] = df.cur[m.To+i-1]
		}
	}
	out.Since = since
	out.Token = d.reads.issue(s)
	out.From, out.To = lo, hi
	out.Changed = lines
	out.Moved = df.moves
	out.Scrolled, out.ScrollbackLost, out.ScrollbackCleared = df.scrolled, df.lost, df.cleared
	out.Redraw = df.redraw
	out.Unchanged = len(lines) == 0 && len(df.moves) == 0 && out.Cut == nil && out.CutBelow == nil && df.scrolled == 0 && df.redraw == "" &&
		!df.cleared && v.cursor == old.cursor
	return nil
}
