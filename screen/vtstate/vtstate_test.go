package vtstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// feed returns a tracker fed stream in pieces of chunk bytes (every
// sequence split across writes when chunk is 1).
func feed(stream string, chunk int) *Tracker {
	t := New(80, 24, 0)
	b := []byte(stream)
	for len(b) > 0 {
		n := min(chunk, len(b))
		t.Write(b[:n])
		b = b[n:]
	}
	return t
}

func TestModesFollowTheStream(t *testing.T) {
	stream := "hello\x1b[?1h\x1b=\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?25l\x1b[4h\x1b[5 q" +
		"\x1b[?1004h\x1b[3;20r\x1b(0\x0e\x1b)0\x1b]0;my title\x07\x1b[1;4:3;38;5;202;48;2;1;2;3m text"
	for _, chunk := range []int{1, 3, len(stream)} {
		tr := feed(stream, chunk)
		s := tr.State()
		for _, m := range []struct {
			n       int
			private bool
			want    bool
		}{
			{1, true, true}, {2004, true, true}, {1000, true, true}, {1002, true, false}, {1006, true, true},
			{25, true, false}, {4, false, true}, {1004, true, true}, {7, true, true}, {66, true, true}, {1049, true, false},
		} {
			set, known := s.Mode(m.n, m.private)
			if !known || set != m.want {
				t.Errorf("chunk %d: mode %d (private %v): set %v known %v, want set %v", chunk, m.n, m.private, set, known, m.want)
			}
		}
		if _, known := s.Mode(9999, true); known {
			t.Errorf("mode 9999 known")
		}
		if s.Shape != 5 || s.Top != 2 || s.Bottom != 19 || s.GL != 1 || s.G[0] != [2]byte{'(', '0'} || s.G[1] != [2]byte{')', '0'} {
			t.Errorf("chunk %d: shape %d region %d-%d GL %d G %q", chunk, s.Shape, s.Top, s.Bottom, s.GL, s.G)
		}
		if s.Title != "my title" || s.Icon != "my title" {
			t.Errorf("chunk %d: title %q icon %q", chunk, s.Title, s.Icon)
		}
		want := Pen{Flags: Bold, Underline: 3, FG: Color{Kind256, 202}, BG: Color{KindRGB, 0x010203}}
		if s.Pen != want {
			t.Errorf("chunk %d: pen %+v, want %+v", chunk, s.Pen, want)
		}
		if tr.Offset() != uint64(len(stream)) {
			t.Errorf("offset %d, want %d", tr.Offset(), len(stream))
		}
	}
}

// TestAltScreenOffsetAndSavedPen: the alternate screen records where it
// was entered; leaving ?1049 restores the pen saved on entering it.
func TestAltScreenOffsetAndSavedPen(t *testing.T) {
	pre := "shell$ \x1b[31m"
	stream := pre + "\x1b[?1049h\x1b[0;44mdraw\x1b[?1000h"
	tr := feed(stream, 2)
	s := tr.State()
	if !s.Alt || s.AltMode != 1049 || s.AltAt != uint64(len(pre)) {
		t.Fatalf("alt %v mode %d at %d, want at %d", s.Alt, s.AltMode, s.AltAt, len(pre))
	}
	tr.Write([]byte("\x1b[?1049l"))
	s = tr.State()
	if s.Alt || s.Pen.FG != (Color{Kind16, 1}) || s.Pen.BG != (Color{}) {
		t.Fatalf("after ?1049l: alt %v pen %+v", s.Alt, s.Pen)
	}
	if s.Mouse != 1000 {
		t.Fatalf("mouse %d after leaving the alternate screen: the mode is not per screen", s.Mouse)
	}
}

func TestMouseOneAtATime(t *testing.T) {
	s := feed("\x1b[?1000h\x1b[?1003h\x1b[?1006h\x1b[?1016h", 100).State()
	if s.Mouse != 1003 || s.MouseEnc != 1016 {
		t.Fatalf("mouse %d enc %d", s.Mouse, s.MouseEnc)
	}
	s = feed("\x1b[?1003h\x1b[?1000l\x1b[?1006h\x1b[?1006l", 100).State()
	if s.Mouse != 0 || s.MouseEnc != 0 {
		t.Fatalf("after resets: mouse %d enc %d", s.Mouse, s.MouseEnc)
	}
	// xterm.js knows only 1006 and 1016: the SGR encoding it keeps is
	// set before the one in force.
	for _, c := range []struct{ stream, modes string }{
		{"\x1b[?1006h\x1b[?1015h", "\x1b[?1006h\x1b[?1015h"},
		{"\x1b[?1015h\x1b[?1006h", "\x1b[?1006h"},
		{"\x1b[?1016h\x1b[?1015h\x1b[?1015l", "\x1b[?1016h"},
		{"\x1b[?1006h\x1b[?1015h\x1b[?1006l", ""},
	} {
		b := feed(c.stream, 100).State()
		got := string(b.AppendModes(nil))
		i := strings.Index(got, "\x1b[?1016l") + len("\x1b[?1016l")
		if j := strings.Index(got[i:], "\x1b>"); j < 0 || got[i:i+j] != c.modes {
			t.Errorf("%q: encodings set %q in %q, want %q", c.stream, got[i:], got, c.modes)
		}
	}
}

func TestKittyStack(t *testing.T) {
	s := feed("\x1b[>1u\x1b[>3u\x1b[=8;2u", 100).State()
	k := s.Kitty[0]
	if !s.KittySeen || k.Flags != 11 || k.N != 2 || k.Stack[0] != 0 || k.Stack[1] != 1 {
		t.Fatalf("kitty %+v", k)
	}
	s = feed("\x1b[>1u\x1b[>3u\x1b[<u", 100).State()
	if k := s.Kitty[0]; k.Flags != 1 || k.N != 1 {
		t.Fatalf("after one pop: %+v", k)
	}
	s = feed("\x1b[>1u\x1b[?1049h\x1b[>5u", 100).State()
	if s.Kitty[0].Flags != 1 || s.Kitty[1].Flags != 5 {
		t.Fatalf("per screen: %+v", s.Kitty)
	}
}

func TestResets(t *testing.T) {
	s := feed("\x1b]2;t\x07\x1b[?1h\x1b[?25l\x1b[5;10r\x1b[1m\x1bH\x1bc", 100).State()
	want := Initial(80, 24)
	want.Title, want.TitleSeen = "t", true
	if s != want {
		t.Fatalf("after RIS: %+v, want %+v", s, want)
	}
	s = feed("\x1b[?1h\x1b[?25l\x1b[5;10r\x1b[1m\x1b[4h\x1b[!p", 100).State()
	if set, _ := s.Mode(1, true); set || !s.CursorVisible() || !s.FullRegion() || s.Pen != (Pen{}) || s.Insert {
		t.Fatalf("after DECSTR: %+v", s)
	}
	// As in xterm.js: DECSTR drops the cursor's shape; ?12's blinking,
	// an option there, outlives DECSTR and RIS.
	for _, reset := range []string{"\x1b[!p", "\x1bc"} {
		s = feed("\x1b[?12h\x1b[5 q"+reset, 100).State()
		if blink, _ := s.Mode(12, true); s.ShapeSeen || s.Shape != 0 || !blink {
			t.Errorf("after %q: shape %d (seen %v), ?12 %v; want none, and ?12 set", reset, s.Shape, s.ShapeSeen, blink)
		}
	}
}

// TestRegionOfEachScreen: as in xterm.js, the alternate screen has a
// scroll region of its own, the whole screen when it is entered, and
// leaving it brings the main screen's back; AppendMainRegion sets that
// one while the alternate screen is shown.
func TestRegionOfEachScreen(t *testing.T) {
	for _, c := range []struct {
		stream              string
		alt                 bool
		top, bottom         int
		mainRegion          string
		altTabs, tabChanged bool
	}{
		{"\x1b[2;5r\x1b[?1049h", true, 0, 23, "\x1b[2;5r", false, false},
		{"\x1b[2;5r\x1b[?1049h\x1b[3;4r", true, 2, 3, "\x1b[2;5r", false, false},
		{"\x1b[2;5r\x1b[?1049h\x1b[3;4r\x1b[?1049l", false, 1, 4, "", false, false},
		{"\x1b[2;5r\x1b[?47h\x1b[!p\x1b[?47l", false, 1, 4, "", false, false},
		{"\x1b[?1049h\x1b[3;4r", true, 2, 3, "", false, false},
		{"\x1bH\x1b[?1049h", true, 0, 23, "", false, true},
		{"\x1b[?1049h\x1b[3g", true, 0, 23, "", true, true},
		{"\x1b[?1049h\x1b[3g\x1b[?1049l\x1b[?1049h", true, 0, 23, "", false, true},
		{"\x1b[2;5r\x1b[?1049h\x1bc", false, 0, 23, "", false, false},
	} {
		for _, chunk := range []int{1, len(c.stream)} {
			s := feed(c.stream, chunk).State()
			if s.Alt != c.alt || s.Top != c.top || s.Bottom != c.bottom {
				t.Errorf("%q: alt %v, region %d-%d; want %v, %d-%d", c.stream, s.Alt, s.Top, s.Bottom, c.alt, c.top, c.bottom)
			}
			if got := string(s.AppendMainRegion(nil)); got != c.mainRegion {
				t.Errorf("%q: AppendMainRegion %q, want %q", c.stream, got, c.mainRegion)
			}
			if s.AltTabsChanged != c.altTabs || s.TabsChanged != c.tabChanged {
				t.Errorf("%q: tabs changed %v, on the alternate screen %v; want %v, %v", c.stream, s.TabsChanged, s.AltTabsChanged, c.tabChanged, c.altTabs)
			}
		}
	}
	// A resize resets both regions.
	tr := feed("\x1b[2;5r\x1b[?1049h\x1b[3;4r", 100)
	tr.Resize(80, 30)
	tr.Write([]byte("\x1b[?1049l"))
	if s := tr.State(); !s.FullRegion() || s.Bottom != 29 {
		t.Errorf("after a resize and leaving: region %d-%d", s.Top, s.Bottom)
	}
}

func TestTabsChanged(t *testing.T) {
	s := feed("abc\x1b[3g\x1bH", 100).State()
	if !s.TabsChanged || s.TabsAt != 3 {
		t.Fatalf("tabs changed %v at %d", s.TabsChanged, s.TabsAt)
	}
	if s := feed("\x1bH\x1b[?5W", 100).State(); s.TabsChanged {
		t.Fatal("DECST8C left tabs changed")
	}
}

// TestCheckpoints: one every `every` bytes, at a point outside any
// sequence, with the state there; Forget drops the older ones.
func TestCheckpoints(t *testing.T) {
	tr := New(80, 24, 10)
	tr.Write([]byte("0123456789\x1b[?1")) // 14 bytes, a sequence under way at the end
	tr.Write([]byte("049h0123456789abc")) // checkpoint at 18, after the sequence
	tr.Write([]byte("x"))                 // and at 31
	cps := tr.Checkpoints()
	if len(cps) != 3 || cps[0].Off != 0 || cps[1].Off != 18 || cps[2].Off != 31 {
		t.Fatalf("checkpoints at %v", offsets(cps))
	}
	if cps[0].State.Alt || !cps[1].State.Alt || cps[1].State.AltAt != 10 {
		t.Fatalf("states: %+v / %+v", cps[0].State, cps[1].State)
	}
	if cp, ok := tr.Checkpoint(30); !ok || cp.Off != 18 {
		t.Fatalf("checkpoint at or before 30: %+v %v", cp, ok)
	}
	tr.Forget(19)
	if cps := tr.Checkpoints(); len(cps) != 1 || cps[0].Off != 31 {
		t.Fatalf("after Forget(19): %v", offsets(cps))
	}
	if tr.Pending() != tr.Offset() {
		t.Fatalf("pending %d offset %d", tr.Pending(), tr.Offset())
	}
	tr.Write([]byte("\x1b]0;ti"))
	if tr.Pending() != 32 {
		t.Fatalf("pending %d, want 32", tr.Pending())
	}
}

// TestRestoreRoundTrip: a fresh tracker fed what AppendPrime writes for
// a state ends in that state (what the restore sets, it sets exactly).
func TestRestoreRoundTrip(t *testing.T) {
	streams := []string{
		"",
		"\x1b[?1h\x1b=\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?25l\x1b[4h\x1b[20h\x1b[3 q\x1b[?12h\x1b[?1004h\x1b[2;10r\x1b[?6h",
		"\x1b(0\x1b)A\x1b*0\x1b+B\x1bn\x1b]1;icon\x07\x1b]2;title\x1b\\\x1b[2;3;5;7;8;9;53;21;31;101;58;5;3m",
		"\x1b[?1049h\x1b[>1u\x1b[>4;2m\x1b[?7l\x1b[?45h\x1b[?1007h\x1b[38;2;10;20;30;48;5;99m\x1b[?12l\x1b[6 q",
		"\x1b[?1047h\x1b[?1003h\x1b[?1016h\x1b[=5;1u\x1b[>2u\x1b[>7u\x0e",
	}
	for _, stream := range streams {
		want := feed(stream, 1000).State()
		prime := want.AppendPrime(nil)
		got := New(80, 24, 0)
		got.Write(prime)
		g := got.State()
		// What the restore does not carry: where the alternate screen
		// was entered and where tabs changed (offsets of the stream),
		// and the saved cursors (restored with the cursor, apart).
		g.AltAt, want.AltAt = 0, 0
		g.Saved, want.Saved = [2]Saved{}, [2]Saved{}
		g.PrivateSeen, want.PrivateSeen = 0, 0
		if !want.KittySeen {
			g.Kitty = want.Kitty
		}
		if g != want {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(want)
			t.Errorf("stream %q: restored by %q\n got %s\nwant %s", stream, prime, gj, wj)
		}
	}
}

func TestSGRForms(t *testing.T) {
	for _, c := range []struct {
		sgr  string
		want Pen
	}{
		{"\x1b[38:2::1:2:3m", Pen{FG: Color{KindRGB, 0x010203}}},
		{"\x1b[38:2:1:2:3m", Pen{FG: Color{KindRGB, 0x010203}}},
		{"\x1b[48:5:17;1m", Pen{Flags: Bold, BG: Color{Kind256, 17}}},
		{"\x1b[1;2m\x1b[22m", Pen{}},
		{"\x1b[4m\x1b[4:0m", Pen{}},
		{"\x1b[95;104m", Pen{FG: Color{Kind16, 13}, BG: Color{Kind16, 12}}},
		{"\x1b[1m\x1b[m", Pen{}},
	} {
		if got := feed(c.sgr, 100).State().Pen; got != c.want {
			t.Errorf("%q: %+v, want %+v", c.sgr, got, c.want)
		}
	}
}

// TestTextIsSkipped: SO and SI in text count, other controls and UTF-8
// text change nothing.
func TestTextIsSkipped(t *testing.T) {
	s := feed("é\x0e中文\x0ftext\r\n\x0e", 4).State()
	if s.GL != 1 {
		t.Fatalf("GL %d", s.GL)
	}
	plain := bytes.Repeat([]byte("plain text é 中 \r\n\t"), 100)
	tr := New(80, 24, 0)
	tr.Write(plain)
	got, want := tr.State(), Initial(80, 24)
	got.Row, got.Col, got.Cur, want.Cur = 0, 0, 0, 0 // the cursor moved
	if got != want {
		t.Fatalf("text changed the state: %+v", tr.State())
	}
}

func offsets(cps []Checkpoint) []uint64 {
	var o []uint64
	for _, c := range cps {
		o = append(o, c.Off)
	}
	return o
}

// TestFastPathsAgreeWithTheParser: whole in one write, CSIs go through
// skipCSI and fastSGR; a byte at a time, through vtparse. Both end in
// the same state, for random sequences of parameters and finals.
func TestFastPathsAgreeWithTheParser(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	finals := "mmmmmHJKhlr"
	for i := 0; i < 2000; i++ {
		var b bytes.Buffer
		for k := r.IntN(6); k >= 0; k-- {
			b.WriteString("\x1b[")
			if r.IntN(8) == 0 {
				b.WriteByte('?')
			}
			for p := r.IntN(7); p > 0; p-- {
				b.WriteString(strconv.Itoa([]int{0, 1, 2, 4, 5, 7, 22, 24, 31, 38, 48, 58, 2, 5, 200, 1049, 25}[r.IntN(17)]))
				b.WriteByte(";;;:"[r.IntN(4)])
			}
			b.WriteByte(finals[r.IntN(len(finals))])
			b.WriteString("x")
		}
		whole, bytewise := feed(b.String(), b.Len()), feed(b.String(), 1)
		if whole.State() != bytewise.State() {
			t.Fatalf("%q: fast paths %+v, parser %+v", b.String(), whole.State(), bytewise.State())
		}
	}
}

// TestMargins: DECSLRM sets the left and right margins only while
// DECLRMM is on (else CSI s saves the cursor); an empty range is
// ignored; leaving DECLRMM, DECSTR, RIS and a resize drop them.
func TestMargins(t *testing.T) {
	for _, c := range []struct {
		in          string
		left, right int
	}{
		{"", 0, 79},
		{"\x1b[5;20s", 0, 79},
		{"\x1b[?69h\x1b[5;20s", 4, 19},
		{"\x1b[?69h\x1b[5s", 4, 79},
		{"\x1b[?69h\x1b[;30s", 0, 29},
		{"\x1b[?69h\x1b[5;200s", 4, 79},
		{"\x1b[?69h\x1b[5;20s\x1b[20;5s", 4, 19},
		{"\x1b[?69h\x1b[5;20s\x1b[7;7s", 4, 19},
		{"\x1b[?69h\x1b[5;20s\x1b[s", 0, 79},
		{"\x1b[?69h\x1b[5;20s\x1b[?69l", 0, 79},
		{"\x1b[?69h\x1b[5;20s\x1b[!p", 0, 79},
		{"\x1b[?69h\x1b[5;20s\x1bc", 0, 79},
	} {
		for _, chunk := range []int{100, 1} {
			s := feed(c.in, chunk).State()
			if l, r := s.Margins(); l != c.left || r != c.right {
				t.Errorf("%q (in %d-byte writes): margins %d-%d, want %d-%d", c.in, chunk, l, r, c.left, c.right)
			}
		}
	}
	tr := feed("\x1b[?69h\x1b[5;20s", 100)
	tr.Resize(100, 30)
	st := tr.State()
	if l, r := st.Margins(); l != 0 || r != 99 {
		t.Errorf("after a resize: margins %d-%d", l, r)
	}
}

// TestTitleStacks: CSI 22 t pushes the title (Ps 2), the icon name (1)
// or both (0), CSI 23 t pops them back, ten deep at most.
func TestTitleStacks(t *testing.T) {
	s := feed("\x1b]0;a\x07\x1b[22;0t\x1b]2;b\x07\x1b[22;2t\x1b]1;i\x07\x1b[22;1t\x1b]0;c\x07", 1).State()
	if got := s.TitleStack.Entries(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("title stack %q", got)
	}
	if got := s.IconStack.Entries(); !slices.Equal(got, []string{"a", "i"}) {
		t.Errorf("icon stack %q", got)
	}
	s = feed("\x1b]0;a\x07\x1b[22t\x1b]0;b\x07\x1b[22;2t\x1b]0;c\x07\x1b[23;2t", 100).State()
	if s.Title != "b" || s.Icon != "c" || s.TitleStack.Len() != 1 || s.IconStack.Len() != 1 {
		t.Errorf("after a pop of the title: title %q, icon %q, stacks %d and %d", s.Title, s.Icon, s.TitleStack.Len(), s.IconStack.Len())
	}
	s = feed("\x1b[23t\x1b[23;1t", 100).State()
	if s.TitleSeen || s.IconSeen {
		t.Errorf("a pop of an empty stack set a title: %+v", s)
	}
	// Titles never set push as empty entries, and pop back as such.
	s = feed("\x1b[22;2t\x1b[22;2t\x1b]2;x\x07\x1b[23;2t", 100).State()
	if got := s.TitleStack.Entries(); s.Title != "" || !s.TitleSeen || !slices.Equal(got, []string{""}) {
		t.Errorf("empty titles: title %q (seen %v), stack %q", s.Title, s.TitleSeen, got)
	}
	var b strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "\x1b]2;t%d\x07\x1b[22;2t", i)
	}
	s = feed(b.String(), 100).State()
	if got := s.TitleStack.Entries(); len(got) != 10 || got[0] != "t2" || got[9] != "t11" {
		t.Errorf("twelve pushes kept %q", got)
	}
}

// TestEqualCheckpointsShareAState: a server keeps a tracker per terminal,
// and a flood's checkpoints hold the same state over and over; they keep
// one copy of it, while each checkpoint still reports its own offset and
// a checkpoint after a change its own state.
func TestEqualCheckpointsShareAState(t *testing.T) {
	tr := New(80, 24, 1024)
	flood := func() {
		for range 200 {
			tr.Write([]byte(strings.Repeat("y\r\n", 30)))
		}
	}
	flood()
	tr.Write([]byte("\x1b[?2004h"))
	flood()
	if len(tr.cps) < 20 {
		t.Fatalf("%d checkpoints, want many", len(tr.cps))
	}
	states := map[*State]bool{}
	for _, m := range tr.cps {
		states[m.st] = true
	}
	// The initial state, the flood's at the bottom of the screen, and
	// that one with bracketed paste.
	if len(states) != 3 {
		t.Errorf("%d checkpoints keep %d states", len(tr.cps), len(states))
	}
	cps := tr.Checkpoints()
	last := cps[len(cps)-1]
	if set, _ := last.State.Mode(2004, true); !set {
		t.Errorf("the last checkpoint (at %d) lost bracketed paste", last.Off)
	}
	if set, _ := cps[1].State.Mode(2004, true); set {
		t.Errorf("a checkpoint before ?2004h (at %d) has it", cps[1].Off)
	}
	// A copy: changing what Checkpoints returned changes nothing kept.
	cps[len(cps)-2].State.Title = "changed"
	if cp, _ := tr.Checkpoint(last.Off); cp.State.Title != "" {
		t.Errorf("a caller's change reached the tracker: title %q", cp.State.Title)
	}
	for i := 1; i < len(cps); i++ {
		if cps[i].Off <= cps[i-1].Off {
			t.Fatalf("offsets not increasing: %v", offsets(cps))
		}
	}
}
