//go:build unix

package session

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/session/wire"
)

// puppet runs a shell loop that prints each line it is sent through
// printf, so a test draws on the screen with escape sequences ("\033[3H")
// typed as text, without echo.
func puppet(t *testing.T, cols, rows int) *Daemon {
	t.Helper()
	d := benchDaemon(t, Config{Cols: cols, Rows: rows, Command: []string{"sh", "-c",
		`stty -echo; printf 'ready\n'; while IFS= read -r l; do printf "$l"; done`}})
	untilLine(t, d, 1, "ready")
	return d
}

// draw sends one printf line and waits until screen line n reads want.
func draw(t *testing.T, d *Daemon, printf string, n int, want string) {
	t.Helper()
	mustCall(t, d.SocketPath(), map[string]any{"type": "INPUT", "data": printf + "\r"})
	untilLine(t, d, n, want)
}

func untilLine(t *testing.T, d *Daemon, n int, want string) {
	t.Helper()
	untilState(t, d, func(st *state) bool { return st.scr.Line(n, false) == want })
}

// read sends an OUTPUT and decodes its answer; a request error fails.
func read(t *testing.T, d *Daemon, req map[string]any) wire.OutputData {
	t.Helper()
	req["type"] = "OUTPUT"
	r := mustCall(t, d.SocketPath(), req)
	var out wire.OutputData
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return out
}

// readErr sends an OUTPUT that must fail and returns its error text.
func readErr(t *testing.T, d *Daemon, req map[string]any) string {
	t.Helper()
	req["type"] = "OUTPUT"
	r, err := wire.Call(d.SocketPath(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "error" {
		t.Fatalf("%v answered %s, want an error", req, r.Data)
	}
	return r.Error
}

func lines(ls []wire.Line) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%d:%s|", l.N, l.Text)
	}
	return b.String()
}

func TestChangesOneRow(t *testing.T) {
	d := puppet(t, 40, 6)
	draw(t, d, `\033[2J\033[Ha\nb\nc\nd`, 4, "d")
	full := read(t, d, map[string]any{"changes": true})
	if full.Token == "" || full.Screen != "a\nb\nc\nd\n\n\n" || full.From != 1 || full.To != 6 {
		t.Fatalf("full read with a token: %+v", full)
	}
	draw(t, d, `\033[3;1HC3`, 3, "C3")
	ch := read(t, d, map[string]any{"since": full.Token})
	if got := lines(ch.Changed); got != "3:C3|" {
		t.Fatalf("changed = %s, want only row 3", got)
	}
	if ch.Unchanged || ch.Scrolled != 0 || ch.Redraw != "" || ch.Since != full.Token || ch.Screen != "" {
		t.Errorf("answer: %+v", ch)
	}
	if ch.Cursor != (wire.Cursor{Row: 2, Col: 2}) || ch.Token == "" || ch.Token == full.Token {
		t.Errorf("cursor %+v token %q", ch.Cursor, ch.Token)
	}

	// Nothing happened since: unchanged, and a fresh token again.
	same := read(t, d, map[string]any{"since": ch.Token})
	if !same.Unchanged || len(same.Changed) != 0 || same.Token == ch.Token {
		t.Errorf("no change: %+v", same)
	}
	// Only the cursor moved: not unchanged, no rows.
	draw(t, d, `\033[6;5HX\033[D`, 6, "    X")
	draw(t, d, `\033[6;5H \033[1;1H`, 6, "")
	moved := read(t, d, map[string]any{"since": same.Token})
	if moved.Unchanged || len(moved.Changed) != 0 || moved.Cursor != (wire.Cursor{}) {
		t.Errorf("cursor moved: %+v", moved)
	}
	// An older token still works, against its own copy.
	again := read(t, d, map[string]any{"since": full.Token})
	if got := lines(again.Changed); got != "3:C3|" {
		t.Errorf("the first token again: %s", got)
	}
}

func TestChangesScroll(t *testing.T) {
	d := puppet(t, 40, 6)
	draw(t, d, `\033[2J\033[Hr1\nr2\nr3\nr4\nr5\nr6`, 6, "r6")
	tok := read(t, d, map[string]any{"changes": true}).Token
	draw(t, d, `\nr7\nr8\nr9`, 6, "r9")
	ch := read(t, d, map[string]any{"since": tok})
	if ch.Scrolled != 3 || ch.ScrollbackLost != 0 {
		t.Fatalf("scrolled %d lost %d, want 3 and 0", ch.Scrolled, ch.ScrollbackLost)
	}
	// The client's rows 1-3 became scrollback -3..-1 and its rows 4-6 are
	// now rows 1-3: only the three new rows are sent.
	if got, want := lines(ch.Changed), "4:r7|5:r8|6:r9|"; got != want {
		t.Errorf("changed = %s, want %s", got, want)
	}
	if ch.From != -3 || ch.To != 6 || ch.Unchanged {
		t.Errorf("range %d..%d (unchanged %v), want -3..6", ch.From, ch.To, ch.Unchanged)
	}
	if sb := read(t, d, map[string]any{"since": tok, "to": 0}); len(sb.Changed) != 0 || sb.Scrolled != 3 || sb.Unchanged {
		t.Errorf("since with to 0: %+v", sb)
	}

	// A top row that changed before it scrolled off is sent as the
	// scrollback line it became.
	draw(t, d, `\033[1;1HR4!`, 1, "R4!")
	draw(t, d, `\033[6;3H\nr10`, 6, "r10")
	mod := read(t, d, map[string]any{"since": ch.Token})
	if got, want := lines(mod.Changed), "-1:R4!|6:r10|"; got != want || mod.Scrolled != 1 {
		t.Errorf("changed = %s (scrolled %d), want %s", got, mod.Scrolled, want)
	}

	// More than a screen: the lines that were never on the client's screen
	// come from the scrollback, and every row is new.
	draw(t, d, `\na\nb\nc\nd\ne\nf\ng`, 6, "g")
	far := read(t, d, map[string]any{"since": mod.Token})
	if got, want := lines(far.Changed), "-1:a|1:b|2:c|3:d|4:e|5:f|6:g|"; got != want || far.Scrolled != 7 {
		t.Errorf("scrolled past a screen: %s (scrolled %d), want %s", got, far.Scrolled, want)
	}
	// A range narrows what is reported: the screen only.
	if scr := read(t, d, map[string]any{"since": mod.Token, "from": 1}); len(scr.Changed) != 6 || scr.From != 1 {
		t.Errorf("since with from 1: %s", lines(scr.Changed))
	}
}

// A row the client was not given (outside its range, or cut) comes in
// the next changes read even though it did not change.
func TestChangesRowsNotGivenComeLater(t *testing.T) {
	d := puppet(t, 40, 4)
	draw(t, d, `\033[2J\033[Hw\nx\ny\nz`, 4, "z")
	part := read(t, d, map[string]any{"changes": true, "from": 3})
	if part.Screen != "y\nz\n" {
		t.Fatalf("rows 3-4: %q", part.Screen)
	}
	all := read(t, d, map[string]any{"since": part.Token})
	if got := lines(all.Changed); got != "1:w|2:x|" {
		t.Errorf("rows never given: %s", got)
	}
	if after := read(t, d, map[string]any{"since": all.Token}); !after.Unchanged {
		t.Errorf("once given they are known: %+v", after)
	}
}

func TestChangesBudget(t *testing.T) {
	d := puppet(t, 40, 5)
	draw(t, d, `\033[2J\033[H1111\n2222\n3333\n4444\n5555`, 5, "5555")
	// A plain read cut to 12 characters keeps the newest two rows.
	cut := read(t, d, map[string]any{"max_chars": 12})
	if cut.Screen != "4444\n5555\n" || cut.From != 4 || cut.To != 5 {
		t.Fatalf("cut read: %+v", cut)
	}
	if c := cut.Cut; c == nil || *c != (wire.Cut{Lines: 3, Chars: 15, From: 1, To: 3}) {
		t.Fatalf("cut = %+v", cut.Cut)
	}
	if cut.Token != "" {
		t.Errorf("a budget alone asks for no token: %q", cut.Token)
	}
	// The rest, as the cut says.
	rest := read(t, d, map[string]any{"from": cut.Cut.From, "to": cut.Cut.To})
	if rest.Screen != "1111\n2222\n3333\n" {
		t.Errorf("the rest: %q", rest.Screen)
	}
	// A budget that fits cuts nothing.
	if all := read(t, d, map[string]any{"max_chars": 25}); all.Cut != nil || all.From != 1 {
		t.Errorf("fitting budget: %+v", all)
	}
	// A changes read under a budget: the cut rows come with the next read.
	tok := read(t, d, map[string]any{"changes": true, "max_chars": 10}).Token
	first := read(t, d, map[string]any{"since": tok, "max_chars": 10})
	if got := lines(first.Changed); got != "2:2222|3:3333|" || first.Cut == nil || first.Cut.From != 1 || first.Unchanged {
		t.Errorf("first changes read: %s %+v", got, first.Cut)
	}
	second := read(t, d, map[string]any{"since": first.Token, "max_chars": 10})
	if got := lines(second.Changed); got != "1:1111|" || second.Cut != nil {
		t.Errorf("second changes read: %s %+v", got, second.Cut)
	}
	if third := read(t, d, map[string]any{"since": second.Token}); !third.Unchanged {
		t.Errorf("third: %+v", third)
	}
	// Whole lines only: a budget below one line returns none, and says so.
	tiny := read(t, d, map[string]any{"max_chars": 3, "from": 5})
	if tiny.Screen != "" || tiny.Cut == nil || tiny.Cut.Lines != 1 || tiny.From <= tiny.To {
		t.Errorf("tiny budget: %+v", tiny)
	}
	for _, bad := range []any{0, -5, "10"} {
		if msg := readErr(t, d, map[string]any{"max_chars": bad}); !strings.Contains(msg, "max_chars") {
			t.Errorf("max_chars %v: %q", bad, msg)
		}
	}
}

func TestChangesBadTokens(t *testing.T) {
	d := puppet(t, 40, 4)
	other := puppet(t, 40, 4)
	foreign := read(t, other, map[string]any{"changes": true}).Token
	mine := read(t, d, map[string]any{"changes": true}).Token
	id, _, _ := strings.Cut(mine, ".")
	for _, c := range []struct{ tok, want string }{
		{"garbage", "not an OUTPUT token"},
		{"", "not an OUTPUT token"},
		{id + ".0", "not an OUTPUT token"},
		{id + ".-1", "not an OUTPUT token"},
		{"zzzzzzzz.1", "not an OUTPUT token"},
		{foreign, "not issued by this session"},
		{id + ".999", "issued tokens up to " + mine},
	} {
		if msg := readErr(t, d, map[string]any{"since": c.tok}); !strings.Contains(msg, c.want) {
			t.Errorf("since %q: %q, want it to contain %q", c.tok, msg, c.want)
		}
	}
	if msg := readErr(t, d, map[string]any{"since": 5}); !strings.Contains(msg, "'since' must be a string") {
		t.Errorf("since 5: %q", msg)
	}
	// The ring keeps the last maxSnapshots tokens: the first falls out.
	last := mine
	for range maxSnapshots {
		last = read(t, d, map[string]any{"since": last}).Token
	}
	if msg := readErr(t, d, map[string]any{"since": mine}); !strings.Contains(msg, "Expired token") || !strings.Contains(msg, "last 32") {
		t.Errorf("evicted token: %q", msg)
	}
	if ch := read(t, d, map[string]any{"since": last}); !ch.Unchanged {
		t.Errorf("the newest token: %+v", ch)
	}
}

// Resize, the alternate screen, a format change and clear each say what
// the client gets.
func TestChangesRedraws(t *testing.T) {
	d := puppet(t, 40, 4)
	draw(t, d, `\033[2J\033[Hm1\nm2\nm3\nm4`, 4, "m4")
	tok := read(t, d, map[string]any{"changes": true}).Token

	// The alternate screen: every row, redraw "screen".
	draw(t, d, `\033[?1049h\033[Halt`, 1, "alt")
	alt := read(t, d, map[string]any{"since": tok})
	if alt.Redraw != "screen" || lines(alt.Changed) != "1:alt|2:|3:|4:|" {
		t.Errorf("to the alternate screen: %s %+v", lines(alt.Changed), alt)
	}
	draw(t, d, `\033[?1049l`, 1, "m1")
	back := read(t, d, map[string]any{"since": alt.Token})
	if back.Redraw != "screen" || lines(back.Changed) != "1:m1|2:m2|3:m3|4:m4|" {
		t.Errorf("back to the main screen: %s %+v", lines(back.Changed), back)
	}

	// Another format than the token's: every row, redraw "format".
	ansi := read(t, d, map[string]any{"since": back.Token, "format": "ansi"})
	if ansi.Redraw != "format" || len(ansi.Changed) != 4 {
		t.Errorf("ansi since an ascii token: %+v", ansi)
	}

	// Resize: every row of the new size, redraw "resize".
	mustCall(t, d.SocketPath(), map[string]any{"type": "RESIZE", "cols": 30, "rows": 5})
	rs := read(t, d, map[string]any{"since": back.Token})
	if rs.Redraw != "resize" || len(rs.Changed) != 5 || rs.Size != (wire.Size{Rows: 5, Cols: 30}) {
		t.Errorf("resize: %+v", rs)
	}

	// clear (ED 2 and ED 3): blank rows, and the scrollback was erased.
	draw(t, d, `\033[5H\nscrolled`, 5, "scrolled")
	before := read(t, d, map[string]any{"changes": true})
	if before.ScrollbackAvailable == 0 {
		t.Fatalf("no scrollback to clear: %+v", before)
	}
	draw(t, d, `\033[H\033[2J\033[3Jtop`, 1, "top")
	cl := read(t, d, map[string]any{"since": before.Token})
	if !cl.ScrollbackCleared || cl.Redraw != "" || cl.ScrollbackAvailable != 0 {
		t.Errorf("clear: %+v", cl)
	}
	// The clear moved the screen into the scrollback (as interminai's
	// emulator does) before ED 3 erased it: the client shifts its copy up
	// by those rows, so every row is new to it.
	if cl.Scrolled != 5 {
		t.Errorf("clear: scrolled %d, want the 5 rows the clear moved", cl.Scrolled)
	}
	if got := lines(cl.Changed); got != "1:top|2:|3:|4:|5:|" {
		t.Errorf("clear rows: %s, want every row", got)
	}
}

// The ring is bounded whatever the traffic: maxSnapshots snapshots of 8
// bytes per row. This measures it for an 80x24 screen and for the largest.
func TestChangesMemoryBounded(t *testing.T) {
	for _, rows := range []int{24, wire.MaxDim} {
		var l readLog
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 1000 {
			l.issue(&snapshot{rows: rows, seen: make([]uint64, rows)})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(l.snaps) != maxSnapshots {
			t.Fatalf("%d snapshots kept, want %d", len(l.snaps), maxSnapshots)
		}
		bound := maxSnapshots * (snapshotOverhead + 8*rows)
		if l.bytes() > bound {
			t.Errorf("%d rows: the ring accounts %d bytes, over its bound %d", rows, l.bytes(), bound)
		}
		live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("%d rows: %d tokens kept, %d bytes accounted, heap grew %d bytes after 1000 reads", rows, len(l.snaps), l.bytes(), live)
		if live > int64(2*bound+64<<10) {
			t.Errorf("%d rows: the heap grew %d bytes, more than twice the bound %d", rows, live, bound)
		}
		runtime.KeepAlive(&l)
	}
}

// A line deleted in place (vim's dd: CSI M) moves the rows below it up
// without any scrolling into the scrollback: the answer names the move
// instead of resending the rows.
func TestChangesMoves(t *testing.T) {
	d := puppet(t, 40, 5)
	draw(t, d, `\033[2J\033[Hfirst row of text\nsecond row of text\nthird row of text\nfourth row of text\nfifth`, 5, "fifth")
	tok := read(t, d, map[string]any{"changes": true}).Token
	draw(t, d, `\033[2;1H\033[M`, 2, "third row of text")
	ch := read(t, d, map[string]any{"since": tok})
	if len(ch.Moved) != 1 || ch.Moved[0] != (wire.Move{From: 3, To: 2, Rows: 3}) {
		t.Fatalf("moved = %+v, want rows 3..5 to 2..4", ch.Moved)
	}
	if got := lines(ch.Changed); got != "5:|" || ch.Unchanged {
		t.Errorf("changed = %s", got)
	}
	if after := read(t, d, map[string]any{"since": ch.Token}); !after.Unchanged {
		t.Errorf("moved rows count as given: %+v", after)
	}
}

// BenchmarkOutputSince80x24 is BenchmarkOutput80x24 as a changes read of
// an unchanged screen: hashing the rows and looking the token up, against
// rendering and sending them.
func BenchmarkOutputSince80x24(b *testing.B) {
	d := benchDaemon(b, Config{Command: []string{"sh", "-c",
		`i=0; while [ $i -lt 30 ]; do i=$((i+1)); printf '\033[1;3%dm%079d\033[0m\n' $((i%8)) $i; done; exec cat`}})
	untilState(b, d, func(st *state) bool { return strings.Contains(st.scr.Line(23, false), "30") })
	var out wire.OutputData
	r := mustCall(b, d.SocketPath(), map[string]any{"type": "OUTPUT", "format": "ansi", "changes": true})
	if err := json.Unmarshal(r.Data, &out); err != nil {
		b.Fatal(err)
	}
	var n int
	for b.Loop() {
		// Each read gives the token for the next, as a client chains them.
		r := mustCall(b, d.SocketPath(), map[string]any{"type": "OUTPUT", "format": "ansi", "since": out.Token})
		n = len(r.Data)
		if err := json.Unmarshal(r.Data, &out); err != nil || !out.Unchanged {
			b.Fatalf("%s: %v", r.Data, err)
		}
	}
	b.ReportMetric(float64(n), "bytes/answer")
}

// A PNG read has no rows to list or cut: changes, since and max_chars are
// refused with it, as from and to are, rather than ignored.
func TestPNGRefusesTextReadFields(t *testing.T) {
	d := puppet(t, 40, 4)
	tok := read(t, d, map[string]any{"changes": true}).Token
	for name, v := range map[string]any{"changes": true, "since": tok, "max_chars": 100, "from": 1, "to": 2} {
		msg := readErr(t, d, map[string]any{"format": "png", name: v})
		if want := fmt.Sprintf(`field '%s' does not apply to format "png"`, name); !strings.Contains(msg, want) {
			t.Errorf("png with %s: %q, want it to contain %q", name, msg, want)
		}
	}
	// Asking for no token is asking for nothing.
	r := mustCall(t, d.SocketPath(), map[string]any{"type": "OUTPUT", "format": "png", "changes": false, "since": nil})
	var shot wire.ScreenshotData
	if err := json.Unmarshal(r.Data, &shot); err != nil || len(shot.PNG) == 0 {
		t.Errorf("png with changes false: %v, %d bytes", err, len(shot.PNG))
	}
}
