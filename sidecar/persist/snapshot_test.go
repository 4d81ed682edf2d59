//go:build unix

package persist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/vtstate"
)

// The tail a snapshot is rendered from holds the last lines only, within
// the byte bound, wherever the chunks of the journal split them.
func TestJournalTailStart(t *testing.T) {
	j := newJournal(1 << 20)
	all := numbered(0, 900000) // 9-byte lines, across many chunks
	j.append(all)
	for _, c := range []struct{ lines, max, want int }{
		{0, 1 << 20, 0},           // the last line ends in a newline: nothing after it
		{1, 1 << 20, 9},           // one whole line
		{10000, 1 << 20, 90000},   // across chunks
		{10000, 1000, 1000},       // the byte bound first
		{200000, 1 << 20, 900000}, // more lines than kept: everything
	} {
		off := j.tailStart(c.lines, c.max)
		if got := int(j.end - off); got != c.want {
			t.Errorf("tailStart(%d, %d) keeps %d bytes, want %d", c.lines, c.max, got, c.want)
		}
	}
	j.evict(12345) // the oldest chunk part-used
	if off := j.tailStart(1<<30, 1<<30); off != j.start {
		t.Errorf("tailStart of everything = %d, want the start %d", off, j.start)
	}
}

// frames reads the frames of a raw connection into a channel.
func frames(t *testing.T, c net.Conn) <-chan proto.Frame {
	ch := make(chan proto.Frame, 1024)
	go func() {
		defer close(ch)
		r := proto.NewReader(c)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				return
			}
			ch <- f
		}
	}()
	return ch
}

// next returns the first frame of type typ from ch, failing after a
// generous bound (it is about whether the frame comes, not how soon).
func next(t *testing.T, ch <-chan proto.Frame, typ proto.Type) proto.Frame {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				t.Fatalf("connection ended before %v", typ)
			}
			if f.Type == typ {
				return f
			}
		case <-deadline:
			t.Fatalf("no %v", typ)
		}
	}
}

func send(t *testing.T, c net.Conn, typ proto.Type, v any) {
	t.Helper()
	if _, err := c.Write(proto.AppendFrame(nil, typ, proto.Marshal(v))); err != nil {
		t.Fatal(err)
	}
}

// While a snapshot is being rendered, the terminal is not locked: the
// ATTACH it answers is answered, and a LIST from another connection too.
// (The rendering is held up by the test until both answers came.)
func TestSnapshotRenderedOutsideTheLock(t *testing.T) {
	s := New(Options{})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Shutdown)
	dial := func() (net.Conn, <-chan proto.Frame) {
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, frames(t, c)
	}
	c1, f1 := dial()
	send(t, c1, proto.TypeOpen, map[string]any{"terminalId": "s", "cols": 80, "rows": 24, "journal": 64 << 10,
		"cmd": "/bin/sh", "args": []string{"-c", "seq 1 30000; echo done; exec sleep 1000"}})
	var got []byte
	for !bytes.Contains(got, []byte("done\r\n")) {
		f := next(t, f1, proto.TypeOutput)
		_, data, _ := proto.ParseData(f.Body)
		got = append(got, data...)
	}
	rendering, release := make(chan struct{}), make(chan struct{})
	testHookSnapshot = func() { close(rendering); <-release }
	t.Cleanup(func() { testHookSnapshot = nil })
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	c2, f2 := dial()
	send(t, c2, proto.TypeAttach, map[string]any{"terminalId": "s", "offset": 0})
	if at := next(t, f2, proto.TypeAttached); !strings.Contains(string(at.Body), `"lost":`) {
		t.Fatalf("ATTACHED %s", at.Body)
	}
	<-rendering
	c3, f3 := dial()
	send(t, c3, proto.TypeList, struct{}{})
	var l proto.Listed
	if err := json.Unmarshal(next(t, f3, proto.TypeListed).Body, &l); err != nil || len(l.Terminals) != 1 || !l.Terminals[0].Attached {
		t.Fatalf("LISTED while the snapshot is rendered: %+v, %v", l, err)
	}
	close(release)
	released = true
	var sn proto.Snapshot
	if err := json.Unmarshal(next(t, f2, proto.TypeSnapshot).Body, &sn); err != nil || !strings.Contains(sn.Data, "done") {
		t.Fatalf("SNAPSHOT %+v, %v", sn, err)
	}
}

// A keystroke for a terminal whose input queue is idle is written to the
// PTY by the connection's reader itself: no writer goroutine is started
// for typed input.
func TestKeystrokesTakeTheDirectWrite(t *testing.T) {
	s := New(Options{})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Shutdown)
	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fs := frames(t, c)
	send(t, c, proto.TypeOpen, map[string]any{"terminalId": "k", "cols": 80, "rows": 24, "cmd": "cat"})
	next(t, fs, proto.TypeOpened)
	var got []byte
	for _, key := range "hello\r" {
		if _, err := c.Write(proto.AppendDataFrame(nil, proto.TypeInput, "k", []byte(string(key)))); err != nil {
			t.Fatal(err)
		}
	}
	for !bytes.Contains(got, []byte("hello\r\nhello\r\n")) {
		_, data, _ := proto.ParseData(next(t, fs, proto.TypeOutput).Body)
		got = append(got, data...)
	}
	// The echo of the last key can arrive before the dispatch loop has
	// counted that key written (the PTY echoes it inside the write), so
	// the queue is given until the deadline to say so.
	q := s.lookup("k").input
	pending, _, writerUp := q.Status()
	for deadline := time.Now().Add(15 * time.Second); pending != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		pending, _, writerUp = q.Status()
	}
	if writerUp || pending != 0 {
		t.Fatalf("after typed input: writer goroutine started %v, %d bytes pending", writerUp, pending)
	}
}

// The snapshot's screen takes its scrollback out as text piece by piece,
// holding only a few of its lines as cells at a time: the repaint is the
// same as one rendered on a screen that keeps all snapshotScrollback
// lines, for a tail of many more lines than a piece, some of them
// coloured, some wrapped, and more than the scrollback keeps.
func TestSnapshotStreamedAsAWholeScreenWould(t *testing.T) {
	for _, total := range []int{10, 61, 3*64 + 17, snapshotScrollback + 2500} {
		var tail bytes.Buffer
		for i := 0; i < total; i++ {
			switch i % 7 {
			case 0:
				fmt.Fprintf(&tail, "\x1b[3%dmline %d in colour\x1b[0m\r\n", i%8, i)
			case 3:
				fmt.Fprintf(&tail, "line %d wraps: %s\r\n", i, strings.Repeat("w", 150))
			case 5:
				fmt.Fprintf(&tail, "line %d \"quoted\" \\ back\tslash é ☃ 中 \u2028 \xff\r\n", i)
			default:
				fmt.Fprintf(&tail, "line %d\r\n", i)
			}
		}
		tail.WriteString("prompt$ ")
		checkStreamedSnapshot(t, fmt.Sprintf("%d lines", total), tail.Bytes(), 80, 24)
	}
}

// Sequences that scroll many lines in a few bytes (line feeds as vertical
// tabs and form feeds, IND, NEL, SU by a screenful) lose none of the lines
// they push into the scrollback on their way into the repaint.
func TestSnapshotKeepsLinesScrolledManyAtATime(t *testing.T) {
	numbered := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "row %d\r\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name       string
		tail       string
		cols, rows int
	}{
		{"vertical tabs", numbered(30) + "x" + strings.Repeat("\v", 900) + "end", 80, 24},
		{"form feeds", numbered(30) + "y" + strings.Repeat("\f", 900) + "end", 80, 24},
		{"IND and NEL", numbered(30) + strings.Repeat("a\x1bDb\x1bE", 300) + "end", 80, 24},
		{"SU by a screen", strings.Repeat(numbered(50)+"\x1b[50S", 6) + "end", 80, 50},
		{"SU many times", numbered(40) + strings.Repeat("\x1b[9S", 400) + "end", 80, 24},
		{"SU on a narrow screen", strings.Repeat(numbered(60)+"\x1b[60S", 3) + "end", 4, 60},
	} {
		checkStreamedSnapshot(t, c.name, []byte(c.tail), c.cols, c.rows)
	}
}

// checkStreamedSnapshot compares the snapshot of tail with the lines of a
// screen fed the whole tail at once.
func checkStreamedSnapshot(t *testing.T, name string, tail []byte, cols, rows int) {
	t.Helper()
	// In slices as a journal's chunks hold it, split anywhere.
	var slices [][]byte
	for rest := tail; len(rest) > 0; {
		n := min(len(rest), 4093)
		slices, rest = append(slices, rest[:n]), rest[n:]
	}
	st := snapshotTail{id: "s", offset: 42, cols: cols, rows: rows, tail: slices, size: len(tail), final: vtstate.Initial(cols, rows)}
	got := decodeSnapshot(t, st.frame())

	// The reference: the whole tail into a screen that keeps all the
	// scrollback a snapshot shows.
	sc := screen.New(cols, rows, screen.Options{Scrollback: snapshotScrollback})
	sc.Write(tail)
	var want strings.Builder
	want.WriteString(snapshotPreamble)
	for n := sc.ScrollbackLen(); n >= 1; n-- {
		want.WriteString(sc.Line(-n, true) + "\r\n")
	}
	for n := 1; n <= rows; n++ {
		want.WriteString(sc.Line(n, true))
		if n < rows {
			want.WriteString("\r\n")
		}
	}
	want.Write(appendRestore(nil, sc, &st.final, rows, 0))
	if got.Data != want.String() {
		t.Errorf("%s: the streamed snapshot (%d bytes, %d lines) differs from the whole screen's (%d bytes, %d lines)",
			name, len(got.Data), strings.Count(got.Data, "\n"), want.Len(), strings.Count(want.String(), "\n"))
	}
	if got.Offset != 42 || int(got.Cols) != cols || int(got.Rows) != rows || got.TerminalID != "s" {
		t.Fatalf("%s: SNAPSHOT fields %+v", name, got)
	}
}

func decodeSnapshot(t *testing.T, frame []byte) proto.Snapshot {
	t.Helper()
	f, err := proto.NewReader(bytes.NewReader(frame)).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != proto.TypeSnapshot {
		t.Fatalf("%v frame: %s", f.Type, f.Body)
	}
	var s proto.Snapshot
	if err := json.Unmarshal(f.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A SNAPSHOT's tail is the journal's own bytes, pinned until it is
// rendered: a child that goes on flooding meanwhile waits for room
// instead of overwriting them, and the repaint is of consecutive lines.
func TestSnapshotTailPinnedWhileRendered(t *testing.T) {
	s := New(Options{})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Shutdown)
	dial := func() (net.Conn, <-chan proto.Frame) {
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, frames(t, c)
	}
	const journal = 256 << 10
	c1, f1 := dial()
	send(t, c1, proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "journal": journal,
		"cmd": "seq", "args": []string{"1", "100000000"}})
	for got := 0; got < 4*journal; {
		_, data, _ := proto.ParseData(next(t, f1, proto.TypeOutput).Body)
		got += len(data)
	}
	rendering, release := make(chan struct{}), make(chan struct{})
	testHookSnapshot = func() { close(rendering); <-release }
	t.Cleanup(func() { testHookSnapshot = nil })
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	c2, f2 := dial()
	send(t, c2, proto.TypeAttach, map[string]any{"terminalId": "f", "offset": 0})
	<-rendering
	// The flood goes on until the reader finds no room it may take: it
	// waits, and the journal's end stays where it is.
	term := s.lookup("f")
	var last uint64
	for stable, deadline := 0, time.Now().Add(15*time.Second); stable < 20; time.Sleep(time.Millisecond) {
		term.mu.Lock()
		end := term.j.end
		term.mu.Unlock()
		if term.waitsForRoom() && end == last {
			stable++
		} else {
			stable = 0
		}
		last = end
		if time.Now().After(deadline) {
			t.Fatal("the reader never waited for room while the snapshot was rendered")
		}
	}
	close(release)
	released = true
	var sn proto.Snapshot
	if err := json.Unmarshal(next(t, f2, proto.TypeSnapshot).Body, &sn); err != nil {
		t.Fatal(err)
	}
	plain := regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`).ReplaceAllString(sn.Data, "")
	lines := strings.Split(strings.TrimSpace(plain), "\r\n")
	if len(lines) < 1000 {
		t.Fatalf("a repaint of %d lines", len(lines))
	}
	// The first and the last line may be cut: the ones between count up.
	prev := -1
	for i, l := range lines[1 : len(lines)-1] {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil || (prev >= 0 && n != prev+1) {
			t.Fatalf("line %d of the repaint is %q after %d: the tail was overwritten while rendered", i+1, l, prev)
		}
		prev = n
	}
}

// A tail primed from a checkpoint before its lines begin (skip): the
// bytes before them are parsed but not rendered, so the frame is the same
// as if they were, the lines they scroll off being older than the
// scrollback kept, and its buffer is sized for the lines shown, not for
// the whole tail (the server's RSS while a SNAPSHOT is built).
func TestSnapshotSkipRendersOnlyTheLinesShown(t *testing.T) {
	var prefix, shown strings.Builder
	for i := 0; prefix.Len() < 1<<20; i++ {
		fmt.Fprintf(&prefix, "\x1b[3%dmolder line %d\x1b[m\r\n", i%8, i)
	}
	for i := 0; i < snapshotScrollback+40; i++ {
		fmt.Fprintf(&shown, "%0119d\r\n", i)
	}
	tail := []byte(prefix.String() + shown.String())
	var slices [][]byte
	for rest := tail; len(rest) > 0; {
		n := min(len(rest), 64<<10)
		slices, rest = append(slices, rest[:n]), rest[n:]
	}
	whole := snapshotTail{id: "big", offset: 1, cols: 120, rows: 40, tail: slices, size: len(tail), final: vtstate.Initial(120, 40)}
	skipped := whole
	skipped.skip = prefix.Len()
	want, got := whole.frame(), skipped.frame()
	if !bytes.Equal(got, want) {
		t.Fatalf("the frame with the first %d bytes skipped differs from the whole tail's (%d and %d bytes)", skipped.skip, len(got), len(want))
	}
	if bytes.Contains(got, []byte("older line")) {
		t.Fatal("a line older than the scrollback is in the SNAPSHOT")
	}
	if r := float64(cap(got)) / float64(len(got)); r > 1.3 {
		t.Fatalf("a frame of %d bytes was built in a buffer of %d (%.2fx)", len(got), cap(got), r)
	}
}

// BenchmarkSnapshotFrame renders the SNAPSHOT of a full tail of 120-column
// lines, as the bench's 256 MiB journal row does: its time, and with
// -benchmem what it allocates (the server's RSS growth while it runs).
func BenchmarkSnapshotFrame(b *testing.B) {
	line := strings.Repeat("x", 119) + "\r\n"
	tail := []byte(strings.Repeat(line, snapshotScrollback+40))
	var slices [][]byte
	for rest := tail; len(rest) > 0; {
		n := min(len(rest), 64<<10)
		slices, rest = append(slices, rest[:n]), rest[n:]
	}
	st := snapshotTail{id: "big", offset: 1, cols: 120, rows: 40, tail: slices, size: len(tail), final: vtstate.Initial(120, 40)}
	b.SetBytes(int64(len(tail)))
	b.ReportAllocs()
	for b.Loop() {
		st.frame()
	}
}

// A program that wrote into the last column left a wrap pending: its
// next character goes on the next line. A SNAPSHOT taken then puts the
// host's emulator in the same state, so that what comes after it lands
// where it would after the whole stream: for a narrow character, a wide
// one, a coloured one, and with the program's own pen kept.
func TestSnapshotKeepsAPendingWrap(t *testing.T) {
	const cols, rows = 20, 5
	cases := []struct{ name, tail, after string }{
		{"narrow", "prompt\r\n" + strings.Repeat("x", cols), "NEXT"},
		{"wide", "a\r\n" + strings.Repeat("y", cols-2) + "中", "NEXT"},
		{"coloured, pen after", "\x1b[31m" + strings.Repeat("r", cols-1) + "\x1b[1;44mZ\x1b[0;32m", "green"},
		{"last row scrolls", strings.Repeat("line\r\n", rows-1) + strings.Repeat("s", cols), "NEXT"},
		{"no wrap pending", strings.Repeat("n", cols-1), "NEXT"},
		{"ASCII last, line drawing since", strings.Repeat("a", cols) + "\x1b(0", "qq"},
		{"line drawing last, in G1", "\x1b)0\x0e" + strings.Repeat("q", cols), "x\x0fx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker(cols, rows, 1<<20)
			tr.Write([]byte(tc.tail))
			st := snapshotTail{id: "s", cols: cols, rows: rows, tail: [][]byte{[]byte(tc.tail)}, size: len(tc.tail), final: tr.State()}
			snap := decodeSnapshot(t, st.frame())

			want := screen.New(cols, rows, screen.Options{})
			want.Write([]byte(tc.tail + tc.after))
			got := screen.New(cols, rows, screen.Options{})
			got.Write([]byte(snap.Data + tc.after))
			for n := 1; n <= rows; n++ {
				if g, w := got.Line(n, true), want.Line(n, true); g != w {
					t.Errorf("line %d after the snapshot and %q: %q, after the stream %q", n, tc.after, g, w)
				}
			}
			gr, gc := got.Cursor()
			wr, wc := want.Cursor()
			if gr != wr || gc != wc || got.PendingWrap() != want.PendingWrap() {
				t.Errorf("cursor %d,%d (wrap pending %v), after the stream %d,%d (%v)", gr, gc, got.PendingWrap(), wr, wc, want.PendingWrap())
			}
		})
	}
}

// TestSnapshotKeepsTheMarginsAndTitles: the left and right margins
// (DECSLRM, under DECLRMM) and the title stack are part of what a
// SNAPSHOT restores: after it, what the program writes next lands where
// it would have after the whole stream, and a pop gives back the title
// pushed before the snapshot.
func TestSnapshotKeepsTheMarginsAndTitles(t *testing.T) {
	const cols, rows = 20, 6
	cases := []struct{ name, tail, after string }{
		{"margins", "\x1b[?69h\x1b[5;12s\x1b[2;5Hwrapped text", " and more inside"},
		{"margins in origin mode", "\x1b[2;5r\x1b[?69h\x1b[3;9s\x1b[?6h\x1b[2;2Hat", "\x1b[1;1Hcorner"},
		{"margins and a saved cursor", "\x1b[?69h\x1b[4;10s\x1b[3;6Hx\x1b7\x1b[1;1H", "\x1b8saved"},
		{"margins mode, no margins", "\x1b[?69h\x1b[2;2Hx", "\x1b[1;5s12345678"},
		{"margins dropped with the mode", "\x1b[?69h\x1b[5;12s\x1b[?69l\x1b[2;15H", "past the old right"},
		{"margins dropped by DECSTR", "\x1b[?69h\x1b[5;12s\x1b[!p\x1b[2;15H", "past"},
		{"title stack", "\x1b]2;shell\x07\x1b[22;0t\x1b]2;vim file\x07", "\x1b[23;0t"},
		{"two deep, title only", "\x1b]2;one\x07\x1b[22;2t\x1b]2;two\x07\x1b[22;2t\x1b]2;three\x07", "\x1b[23;2t\x1b[23;2t"},
		{"icon pushed alone", "\x1b]0;both\x07\x1b[22;1t\x1b]2;other\x07", "\x1b[23;1t"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { snapshotThen(t, cols, rows, tc.tail, tc.after) })
	}
}

// snapshotThen checks that a screen fed the SNAPSHOT of tail (with no
// checkpoint: the tail is the whole stream) and then after shows what a
// screen fed tail and after shows: lines, cursor, margins and title.
func snapshotThen(t *testing.T, cols, rows int, tail, after string) {
	t.Helper()
	tr := newTracker(uint16(cols), uint16(rows), 1<<20)
	tr.Write([]byte(tail))
	st := snapshotTail{id: "s", cols: cols, rows: rows, tail: [][]byte{[]byte(tail)}, size: len(tail), final: tr.State()}
	snap := decodeSnapshot(t, st.frame())

	want := screen.New(cols, rows, screen.Options{})
	want.Write([]byte(tail + after))
	got := screen.New(cols, rows, screen.Options{})
	got.Write([]byte(snap.Data + after))
	for n := 1; n <= rows; n++ {
		if g, w := got.Line(n, true), want.Line(n, true); g != w {
			t.Errorf("line %d after the snapshot and %q: %q, after the stream %q", n, after, g, w)
		}
	}
	gr, gc := got.Cursor()
	wr, wc := want.Cursor()
	if gr != wr || gc != wc {
		t.Errorf("cursor %d,%d, after the stream %d,%d", gr, gc, wr, wc)
	}
	gl, grt := got.Margins()
	wl, wrt := want.Margins()
	if gl != wl || grt != wrt || got.PrivateMode(69) != want.PrivateMode(69) {
		t.Errorf("margins %d-%d (DECLRMM %v), after the stream %d-%d (%v)", gl, grt, got.PrivateMode(69), wl, wrt, want.PrivateMode(69))
	}
	if g, w := got.Title(), want.Title(); g != w {
		t.Errorf("title %q, after the stream %q", g, w)
	}
}

// TestSnapshotKeepsTheMainScreenBehindTheAlternate: a program that
// entered the alternate screen within the snapshot's tail, in a journal
// too young for a checkpoint (the tail is all there is): the main
// screen's lines are in the SNAPSHOT, behind the alternate screen, so
// that the program's leaving it shows them. They were drawn blank.
func TestSnapshotKeepsTheMainScreenBehindTheAlternate(t *testing.T) {
	const cols, rows = 30, 6
	shell := "$ ls\r\nfile-a  file-b\r\n$ vim file-a\r\n"
	for _, mode := range []string{"1049", "1047", "47"} {
		t.Run(mode, func(t *testing.T) {
			snapshotThen(t, cols, rows, shell+"\x1b7\x1b[?"+mode+"h\x1b[H\x1b[2Jvim's screen\x1b[3;3Hx", "\x1b[?"+mode+"l\x1b8$ ")
		})
	}
}

// TestRevivedScreenStartsAtDefaults: a revived terminal's first output,
// the dead one's screen, leaves the terminal as a new program expects to
// find it: the main screen shown with the lines the dead program left
// there, and the modes it set (mouse reporting, bracketed paste, cursor
// keys, keypad, a region, the cursor style, the kitty flags) back at
// their defaults, for the host's emulator and for the new terminal's
// own tracker alike; the title stays.
func TestRevivedScreenStartsAtDefaults(t *testing.T) {
	const cols, rows = 30, 8
	tail := "\x1b]2;editing\x07$ ls\r\nfile-a  file-b\r\n$ vim file-a\r\n" +
		"\x1b[?1049h\x1b[H\x1b[2J\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b[?1h\x1b=\x1b[2;6r\x1b[?6h" +
		"\x1b[5 q\x1b[>1u\x1b[>4;2m\x1b[20h\x1b[?69h\x1b[3;20s\x1b[1;1Hvim's own screen"
	tr := newTracker(cols, rows, 1<<20)
	tr.Write([]byte(tail))
	st := snapshotTail{id: "s", cols: cols, rows: rows, tail: [][]byte{[]byte(tail)}, size: len(tail), final: tr.State()}
	seed := renderScreen(st)

	sc := screen.New(cols, rows, screen.Options{})
	sc.Write(append(seed, "new$ "...))
	if sc.AltScreen() {
		t.Fatal("the revived terminal shows the alternate screen")
	}
	for _, m := range []int{1, 6, 69, 1000, 1004, 1006, 2004} {
		if sc.PrivateMode(m) {
			t.Errorf("mode ?%d still set", m)
		}
	}
	if top, bottom := sc.ScrollRegion(); top != 0 || bottom != rows-1 || sc.AppKeypad() || sc.NewlineMode() || sc.CursorStyle() != 0 {
		t.Errorf("region %d-%d, keypad %v, newline %v, cursor style %d", top, bottom, sc.AppKeypad(), sc.NewlineMode(), sc.CursorStyle())
	}
	if l, r := sc.Margins(); l != 0 || r != cols-1 {
		t.Errorf("margins %d-%d", l, r)
	}
	var lines []string
	for n := 1; n <= rows; n++ {
		lines = append(lines, strings.TrimRight(sc.Line(n, false), " "))
	}
	got := strings.Join(lines, "\n")
	// The new program starts on the line after the cursor the dead one
	// saved as it entered the alternate screen.
	if !strings.Contains(got, "file-a  file-b\n$ vim file-a\n\nnew$") || strings.Contains(got, "vim's own screen") {
		t.Errorf("the revived screen shows:\n%s", got)
	}
	if sc.Title() != "editing" {
		t.Errorf("title %q", sc.Title())
	}

	nt := newTracker(cols, rows, 1<<20)
	nt.Write(seed)
	ns := nt.State()
	init := vtstate.Initial(cols, rows)
	if ns.Alt || ns.Mouse != 0 || ns.MouseEnc != 0 || ns.Private != init.Private || ns.Keypad || ns.Newline ||
		!ns.FullRegion() || ns.Right != 0 || ns.Shape != 0 || ns.Kitty != init.Kitty || ns.ModifyOtherKeys > 0 {
		t.Errorf("the new terminal's tracker after the old screen: %+v", ns)
	}
}
