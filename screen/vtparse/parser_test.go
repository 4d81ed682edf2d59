package vtparse

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func parseAll(in string, chunk int) *recorder {
	var p Parser
	r := &recorder{}
	b := []byte(in)
	for len(b) > 0 {
		n := min(chunk, len(b))
		if chunk <= 0 {
			n = len(b)
		}
		p.Parse(b[:n], r)
		b = b[n:]
	}
	return r
}

func TestParseEvents(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"text and controls", "ab\r\nc", []string{`print "ab"`, "exec 0xd", "exec 0xa", `print "c"`}},
		{"utf8", "é中\xffx", []string{"print \"é中\ufffdx\""}},
		{"truncated utf8", "\xe4\xb8x", []string{"print \"\ufffdx\""}},
		{"csi params", "\x1b[1;22H", []string{`csi 'H' priv='\x00' inter="" params=[1 22] sub=[false false] bad=false raw="\x1b[1;22H"`}},
		{"csi empty params", "\x1b[;5m", []string{`csi 'm' priv='\x00' inter="" params=[0 5] sub=[false false] bad=false raw="\x1b[;5m"`}},
		{"csi sub params", "\x1b[38:2:1m", []string{`csi 'm' priv='\x00' inter="" params=[38 2 1] sub=[false true true] bad=false raw="\x1b[38:2:1m"`}},
		{"csi private", "\x1b[?1049h", []string{`csi 'h' priv='?' inter="" params=[1049] sub=[false] bad=false raw="\x1b[?1049h"`}},
		{"csi intermediate", "\x1b[2 q", []string{`csi 'q' priv='\x00' inter=" " params=[2] sub=[false] bad=false raw="\x1b[2 q"`}},
		{"csi clamped", "\x1b[99999999A", []string{`csi 'A' priv='\x00' inter="" params=[65535] sub=[false] bad=false raw="\x1b[99999999A"`}},
		{"csi late private", "\x1b[1?h", []string{`csi 'h' priv='\x00' inter="" params=[1] sub=[false] bad=true raw="\x1b[1?h"`}},
		{"csi digit after intermediate", "\x1b[ 1q", []string{`csi 'q' priv='\x00' inter=" " params=[] sub=[] bad=true raw="\x1b[ 1q"`}},
		{"control inside csi", "\x1b[1\n2H", []string{"exec 0xa", `csi 'H' priv='\x00' inter="" params=[12] sub=[false] bad=false raw="\x1b[12H"`}},
		{"can cancels", "\x1b[12\x18x", []string{`print "x"`}},
		{"esc restarts", "\x1b[12\x1b7", []string{`esc '7' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b7"`}},
		{"esc intermediate", "\x1b(0", []string{`esc '0' priv='\x00' inter="(" params=[] sub=[] bad=false raw="\x1b(0"`}},
		{"osc bel", "\x1b]0;hi\x07", []string{`osc ']' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b]0;hi\a" data="0;hi" bel=true`}},
		{"osc st", "\x1b]133;A\x1b\\", []string{`osc ']' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b]133;A\x1b\\" data="133;A" bel=false`}},
		{"osc cut by esc", "\x1b]2;t\x1b[m", []string{
			`osc ']' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b]2;t" data="2;t" bel=false`,
			`csi 'm' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b[m"`}},
		{"dcs", "\x1bP1$r\n\x1b\\z", []string{`str 'P' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1bP1$r\n\x1b\\"`, `print "z"`}},
		{"apc", "\x1b_G\x1b\\", []string{`str '_' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b_G\x1b\\"`}},
		{"csi final bracket", "\x1b[]", []string{`csi ']' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b[]"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, chunk := range []int{0, 1, 2, 3} {
				got := parseAll(c.in, chunk).done()
				if !slices.Equal(got, c.want) {
					t.Errorf("chunk %d:\n got %q\nwant %q", chunk, got, c.want)
				}
			}
		})
	}
}

// TestRawReproducesStream checks the promise a filter relies on: for a
// stream of complete sequences and valid UTF-8, writing back what every
// event carries gives the stream unchanged.
func TestRawReproducesStream(t *testing.T) {
	in := "plain \x1b[1;31mred\x1b[0m\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x07 é中😀\x1b(0q\x1b(B\x1bP+q544e\x1b\\\x1b[?25l\x1b[38:2:1:2:3m\t."
	for _, chunk := range []int{0, 1, 5} {
		r := parseAll(in, chunk)
		if string(r.out) != in {
			t.Errorf("chunk %d: got %q", chunk, r.out)
		}
	}
}

func TestMaxRaw(t *testing.T) {
	var p Parser
	p.MaxRaw = 8
	r := &recorder{}
	p.Parse([]byte("\x1b]0;"+strings.Repeat("t", 20)+"\x07"), r)
	got := r.done()
	want := `osc ']' priv='\x00' inter="" params=[] sub=[] bad=false raw="\x1b]0;tttt" data="0;tttttttttttttttttttt" bel=true truncated`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q", got)
	}
}

func TestTooManyParams(t *testing.T) {
	in := "\x1b[" + strings.Repeat("1;", MaxParams) + "1m"
	got := parseAll(in, 0).done()
	if len(got) != 1 || !strings.Contains(got[0], "bad=true") {
		t.Errorf("got %q", got)
	}
}

// TestParseSequence: fed from each ESC, ParseSequence reports the same
// sequences as Parse over the whole stream, stops right after each one,
// and resumes one split across calls.
func TestParseSequence(t *testing.T) {
	stream := []byte("ab\x1b[1;31mtext\x1b]0;title\x07more\x1b(0q\x1b[?1049h\x1bP1$r\x1b\\end\x1b[")
	var whole, seqs recorder
	var p Parser
	p.Parse(stream, &whole)
	var q Parser
	for i := 0; i < len(stream); {
		if !q.InSequence() && stream[i] != 0x1b {
			i++
			continue
		}
		// One byte at a time, to split every sequence across calls.
		n := q.ParseSequence(stream[i:i+1], &seqs)
		if n != 1 {
			t.Fatalf("at %d: took %d bytes of 1", i, n)
		}
		i++
	}
	if !q.InSequence() {
		t.Fatal("the unfinished CSI at the end is not pending")
	}
	onlySeqs := func(events []string) (out []string) {
		for _, e := range events {
			if !strings.HasPrefix(e, "print") && !strings.HasPrefix(e, "exec") {
				out = append(out, e)
			}
		}
		return out
	}
	got, want := onlySeqs(seqs.done()), onlySeqs(whole.done())
	if len(got) != len(want) {
		t.Fatalf("sequences %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("sequence %d: %q, want %q", i, got[i], want[i])
		}
	}
	// Whole: it stops at the text after the sequence.
	var r Parser
	if n := r.ParseSequence([]byte("\x1b[?25lhello"), &seqs); n != len("\x1b[?25l") {
		t.Fatalf("took %d bytes, want %d", n, len("\x1b[?25l"))
	}
}

// c1recorder is a recorder that takes stray 0x80-0x9f bytes itself.
type c1recorder struct{ recorder }

func (r *c1recorder) ExecuteC1(c byte) {
	r.flush()
	r.events = append(r.events, fmt.Sprintf("c1 %#x", c))
}

// TestMalformedUTF8 checks how malformed UTF-8 is cut: one U+FFFD for
// each maximal subpart (the longest start of a valid character), the byte
// that broke it looked at afresh, and a stray byte 0x80-0x9f handed to a
// C1Handler (U+FFFD for a handler without one), as vte does for
// alacritty. Every chunking gives the same events.
func TestMalformedUTF8(t *testing.T) {
	cases := []struct {
		name, in   string
		plain, c1s []string
	}{
		{"stray c1 bytes", "a\x86b\x9bc", []string{"print \"a\ufffdb\ufffdc\""},
			[]string{`print "a"`, "c1 0x86", `print "b"`, "c1 0x9b", `print "c"`}},
		{"stray continuation above c1", "a\xa0b", []string{"print \"a\ufffdb\""}, []string{"print \"a\ufffdb\""}},
		{"surrogate", "a\xed\xa0\x80b", []string{"print \"a\ufffd\ufffd\ufffdb\""},
			[]string{"print \"a\ufffd\ufffd\"", "c1 0x80", `print "b"`}},
		{"overlong two bytes", "a\xc0\x80b", []string{"print \"a\ufffd\ufffdb\""},
			[]string{"print \"a\ufffd\"", "c1 0x80", `print "b"`}},
		{"overlong three bytes", "a\xe0\x9f\xbfb", []string{"print \"a\ufffd\ufffd\ufffdb\""},
			[]string{"print \"a\ufffd\"", "c1 0x9f", "print \"\ufffdb\""}},
		{"past U+10FFFF", "a\xf4\x90\x80\x80b", []string{"print \"a\ufffd\ufffd\ufffd\ufffdb\""},
			[]string{"print \"a\ufffd\"", "c1 0x90", "c1 0x80", "c1 0x80", `print "b"`}},
		{"F5 lead", "a\xf5\xa0b", []string{"print \"a\ufffd\ufffdb\""}, []string{"print \"a\ufffd\ufffdb\""}},
		{"truncated then c1", "a\xe4\xb8\x41\x85b", []string{"print \"a\ufffdA\ufffdb\""},
			[]string{"print \"a\ufffdA\"", "c1 0x85", `print "b"`}},
		{"valid edges", "\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
			[]string{fmt.Sprintf("print %q", "\u0800\ud7ff\U00010000\U0010ffff")},
			[]string{fmt.Sprintf("print %q", "\u0800\ud7ff\U00010000\U0010ffff")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, chunk := range []int{0, 1, 2, 3} {
				if got := parseAll(c.in, chunk).done(); !slices.Equal(got, c.plain) {
					t.Errorf("chunk %d, plain handler:\n got %q\nwant %q", chunk, got, c.plain)
				}
				var p Parser
				r := &c1recorder{}
				b := []byte(c.in)
				for len(b) > 0 {
					n := len(b)
					if chunk > 0 {
						n = min(chunk, n)
					}
					p.Parse(b[:n], r)
					b = b[n:]
				}
				if got := r.done(); !slices.Equal(got, c.c1s) {
					t.Errorf("chunk %d, C1Handler:\n got %q\nwant %q", chunk, got, c.c1s)
				}
			}
		})
	}
}
