//go:build unix

package persist

import (
	"fmt"
	"strings"
	"testing"
)

// found is one query scan reported.
type found struct {
	kind seqKind
	seq  string
	at   uint64
}

func (f found) String() string { return fmt.Sprintf("{%d %q @%d}", f.kind, f.seq, f.at) }

func scanAll(a *answerer, reads []string) []found {
	var got []found
	var at uint64
	for _, r := range reads {
		a.scan([]byte(r), at, func(k seqKind, seq []byte, off uint64) {
			got = append(got, found{k, string(seq), off})
		})
		at += uint64(len(r))
	}
	return got
}

// The queries a real xterm answers are found, each with its kind and
// offset; what only looks like them (other CSIs, OSCs, DA with a
// parameter, a sequence cancelled by another) is not.
func TestScanFindsQueries(t *testing.T) {
	cases := []struct {
		in   string
		want []found
	}{
		{"plain text, no escape", nil},
		{"\x1b[c", []found{{seqIdent, "\x1b[c", 0}}},
		{"ab\x1b[0c", []found{{seqIdent, "\x1b[0c", 2}}},
		{"\x1b[>c\x1b[>0c", []found{{seqIdent, "\x1b[>c", 0}, {seqIdent, "\x1b[>0c", 4}}},
		{"\x1b[>q", []found{{seqIdent, "\x1b[>q", 0}}},
		{"\x1b[5n\x1b[6n\x1b[?6n", []found{{seqIdent, "\x1b[5n", 0}, {seqState, "\x1b[6n", 4}, {seqState, "\x1b[?6n", 8}}},
		{"\x1b[?1049$p\x1b[4$p", []found{{seqState, "\x1b[?1049$p", 0}, {seqState, "\x1b[4$p", 9}}},
		{"\x1b]11;?\x07", []found{{seqIdent, "\x1b]11;?\x07", 0}}},
		{"\x1b]10;?\x1b\\x", []found{{seqIdent, "\x1b]10;?\x1b\\", 0}}},
		{"\x1b]4;1;?;2;?\x07", []found{{seqIdent, "\x1b]4;1;?;2;?\x07", 0}}},
		{"\x1b]11;#102030\x07\x1b]111\x07", []found{{seqIdent, "\x1b]11;#102030\x07", 0}, {seqIdent, "\x1b]111\x07", 13}}},
		{"\x1bP$qm\x1b\\\x1bP$q q\x1b\\", []found{{seqState, "\x1bP$qm\x1b\\", 0}, {seqState, "\x1bP$q q\x1b\\", 7}}},
		{"a\x1bP+q544e\x1b\\", []found{{seqIdent, "\x1bP+q544e\x1b\\", 1}}},
		// Not ours.
		{"\x1b[1c\x1b[=c\x1b[6;1n\x1b[1;2H\x1b[?25l\x1b[>1q\x1b[$p", nil},
		{"\x1b]0;title\x07\x1b]2;t\x1b\\\x1b]8;;http://x\x1b\\", nil},
		{"\x1b]11;?\x1b[c", []found{{seqIdent, "\x1b[c", 6}}}, // the OSC is cancelled
		{"\x1b[1\x02c", nil},
		{"\x1bPq#0;2;0;0;0\x1b\\\x1bP1000p\x1b\\", nil},      // sixel, ReGIS: no queries
		{"\x1bP$qm\x1b[c", []found{{seqIdent, "\x1b[c", 5}}}, // the DCS is cancelled
		{"\x1b(B\x1b7\x1bM", nil},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			got := scanAll(&answerer{}, []string{tc.in})
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("found %v, want %v", got, tc.want)
			}
		})
	}
}

// A query split across two reads, at any byte, is found once, whole,
// at its offset, and so is everything around it.
func TestScanQuerySplitAcrossReads(t *testing.T) {
	stream := "x\x1b[?25h\x1b]11;?\x1b\\y\x1b[6nz\x1b[?2004$p\x1b[>q\x1b]0;t\x07\x1b[c\x1bP$q\"p\x1b\\\x1bPq#0\x1b\\\x1bP+q436f\x1b\\"
	want := scanAll(&answerer{}, []string{stream})
	if len(want) != 7 {
		t.Fatalf("whole stream: found %v, want 7 queries", want)
	}
	for i := 0; i <= len(stream); i++ {
		got := scanAll(&answerer{}, []string{stream[:i], stream[i:]})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("split at %d (%q | %q): found %v, want %q", i, stream[:i], stream[i:], got, want)
		}
	}
	// A byte at a time.
	got := scanAll(&answerer{}, strings.Split(stream, ""))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("byte by byte: found %v, want %v", got, want)
	}
}

// An OSC longer than any query we answer is given up, and what follows
// it is still scanned; a pending query is dropped when a holder takes
// over the answers.
func TestScanBounds(t *testing.T) {
	long := "\x1b]4;" + strings.Repeat("1;#000000;", 100) + "\x07"
	if got := scanAll(&answerer{}, []string{long[:300], long[300:] + "\x1b[c"}); len(got) != 1 || got[0].seq != "\x1b[c" {
		t.Errorf("after a long OSC: found %v, want the DA1 alone", got)
	}
	a := &answerer{}
	scanAll(a, []string{"\x1b[6"})
	if len(a.pending) == 0 {
		t.Fatalf("the half query was not kept")
	}
	a.read(nil, []byte("n"), 3, false) // a holder attached: it answers
	if len(a.pending) != 0 {
		t.Errorf("pending %q kept while a holder is attached", a.pending)
	}
	if got := scanAll(a, []string{"n"}); got != nil {
		t.Errorf("found %v from the rest of a query a holder answered", got)
	}
}

// Replies are known by what they answer, whichever emulator gave them:
// ours (the screen package's) and xterm.js's have the same keys.
func TestReplyKeys(t *testing.T) {
	cases := []struct{ reply, key string }{
		{"\x1b[?62;22c", "?c"}, {"\x1b[?1;2c", "?c"},
		{"\x1b[>1;10;0c", ">c"}, {"\x1b[>0;276;0c", ">c"},
		{"\x1b[0n", "n"}, {"\x1b[5;12R", "R"}, {"\x1b[?5;12R", "?R"},
		{"\x1b[?1049;1$y", "?$y"}, {"\x1b[4;2$y", "$y"},
		{"\x1b]11;rgb:0000/0000/0000\x1b\\", "]11"}, {"\x1b]10;rgb:ffff/ffff/ffff\x07", "]10"},
		{"\x1b]4;1;rgb:cdcd/0000/0000\x07", "]4"},
		{"\x1bP>|ptyplex(dev)\x1b\\", "P>|"}, {"\x1bP>|xterm.js(5.5.0)\x1b\\", "P>|"},
		{"\x1bP1$r0;1m\x1b\\", "P$r"}, {"\x1bP0$r\x1b\\", "P$r"},
		{"\x1bP1+r544e=78\x1b\\", "P+r"}, {"\x1bP0+r436f\x1b\\", "P+r"},
	}
	for _, tc := range cases {
		key, n, ok := replyKey([]byte(tc.reply + "tail"))
		if !ok || key != tc.key || n != len(tc.reply) {
			t.Errorf("replyKey(%q) = %q, %d, %v; want %q, %d", tc.reply, key, n, ok, tc.key, len(tc.reply))
		}
	}
	for _, s := range []string{"\x1b[A", "\x1b[1;5C", "\x1bOP", "\x1b[200~", "\x1b]0;t\x07", "\x1b[?6"} {
		if key, _, ok := replyKey([]byte(s)); ok {
			t.Errorf("replyKey(%q) = %q: a key, a paste mark or a title is not a reply", s, key)
		}
	}
}

// A holder that attaches before queries the server answered gets them in
// its replay, and its emulator answers again: those replies, and only
// those, are taken out of its INPUT; keys and the replies to queries it
// was not replayed go through.
func TestInputTakesOutReplayedAnswers(t *testing.T) {
	a := &answerer{}
	a.mu.Lock()
	a.noteGivenLocked([]byte("\x1b[?62;22c"), 10)
	a.noteGivenLocked([]byte("\x1b[5;1R\x1b]11;rgb:0000/0000/0000\x07"), 20)
	a.mu.Unlock()
	a.attached(15) // replays the CPR and the colour query, not the DA1
	in := "a\x1b[?1;2cb\x1b[3;3R\x1b[Ac\x1b]11;rgb:1010/2020/3030\x1b\\d\x1b[3;3R"
	if got, want := string(a.input([]byte(in))), "a\x1b[?1;2cb\x1b[Acd\x1b[3;3R"; got != want {
		t.Errorf("input %q, want %q", got, want)
	}
	// The holder's colour was learned all the same.
	a.mu.Lock()
	sc := a.identsLocked()
	sc.Write([]byte("\x1b]11;?\x07"))
	got := string(sc.TakeReplies())
	a.mu.Unlock()
	if got != "\x1b]11;rgb:1010/2020/3030\x07" {
		t.Errorf("background after the holder's reply: %q", got)
	}
	if got := string(a.input([]byte("\x1b[?1;2c"))); got != "\x1b[?1;2c" {
		t.Errorf("a reply after the expected ones: %q, want it kept", got)
	}
	// A replay that starts inside a query: the emulator cannot answer
	// it, and nothing is expected of it.
	a.mu.Lock()
	a.noteGivenLocked([]byte("\x1b[4;4R"), 30)
	a.mu.Unlock()
	a.attached(31)
	if got := string(a.input([]byte("\x1b[4;4R"))); got != "\x1b[4;4R" {
		t.Errorf("a reply to a query cut by the ATTACH offset: %q, want it kept", got)
	}
}

// The reader's cost while detached: plain text (one IndexByte per read)
// and text coloured by SGR on every word (each ESC looked at).
func BenchmarkAnswerScan(b *testing.B) {
	for _, tc := range []struct{ name, line string }{
		{"plain", "the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz\r\n"},
		{"sgr", "\x1b[31mthe\x1b[m \x1b[1;32mquick\x1b[m \x1b[38;5;81mbrown\x1b[m fox \x1b[7mjumps\x1b[27m over the lazy dog\r\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			read := []byte(strings.Repeat(tc.line, 4096/len(tc.line)+1)[:4096])
			a := &answerer{}
			b.SetBytes(int64(len(read)))
			for i := 0; i < b.N; i++ {
				a.read(nil, read, uint64(i*len(read)), true)
			}
		})
	}
}

// colourSpecs names each colour a colour OSC sets, queries or resets,
// by the key a later reset finds it under; an empty spec is nothing.
func TestColourSpecs(t *testing.T) {
	for _, c := range []struct{ seq, want string }{
		{"\x1b]10;?;rgb:1/2/3\x07", "10=? 11=rgb:1/2/3"},
		{"\x1b]12;#fff;#000\x1b\\", "12=#fff"},
		{"\x1b]4;1;red;300;x;02;?\x1b\\", "4;1=red 4;2=?"},
		{"\x1b]10;\x07", ""},
		{"\x1b]4;5;\x07", ""},
		{"\x1b]104\x07", "4;*="},
		{"\x1b]104;3;x;07\x07", "4;3= 4;7="},
		{"\x1b]111\x07", "11="},
		{"\x1b]110;whatever\x07", "10="},
	} {
		var got []string
		colourSpecs([]byte(c.seq), func(key, spec string) { got = append(got, key+"="+spec) })
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("%q: %q, want %q", c.seq, s, c.want)
		}
	}
}
