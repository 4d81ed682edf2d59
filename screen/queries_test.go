package screen

import (
	"strings"
	"testing"
)

// TestColorAndModeQueries covers the OSC 4/10/11/12 colour queries and
// DECRQM for every mode the screen implements. Answers queue like the
// other replies: Write returns at once and TakeReplies hands them over.
func TestColorAndModeQueries(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"OSC 10 default, ST", "\x1b]10;?\x1b\\", "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"},
		{"OSC 11 default, BEL", "\x1b]11;?\x07", "\x1b]11;rgb:0000/0000/0000\x07"},
		{"OSC 12 default", "\x1b]12;?\x07", "\x1b]12;rgb:ffff/ffff/ffff\x07"},
		{"OSC 10 and 11 in one", "\x1b]10;?;?\x07", "\x1b]10;rgb:ffff/ffff/ffff\x07\x1b]11;rgb:0000/0000/0000\x07"},
		{"OSC 11 set then query", "\x1b]11;#102030\x07\x1b]11;?\x07", "\x1b]11;rgb:1010/2020/3030\x07"},
		{"OSC 11 set rgb form", "\x1b]11;rgb:ff/8/0\x07\x1b]11;?\x07", "\x1b]11;rgb:ffff/8888/0000\x07"},
		{"OSC 111 resets", "\x1b]11;#102030\x07\x1b]111\x07\x1b]11;?\x07", "\x1b]11;rgb:0000/0000/0000\x07"},
		{"OSC 4 palette 1", "\x1b]4;1;?\x07", "\x1b]4;1;rgb:cdcd/0000/0000\x07"},
		{"OSC 4 cube", "\x1b]4;196;?\x07", "\x1b]4;196;rgb:ffff/0000/0000\x07"},
		{"OSC 4 grey", "\x1b]4;232;?\x07", "\x1b]4;232;rgb:0808/0808/0808\x07"},
		{"OSC 4 two queries", "\x1b]4;0;?;15;?\x1b\\", "\x1b]4;0;rgb:0000/0000/0000\x1b\\\x1b]4;15;rgb:ffff/ffff/ffff\x1b\\"},
		{"OSC 4 set then query", "\x1b]4;3;#abcdef\x07\x1b]4;3;?\x07", "\x1b]4;3;rgb:abab/cdcd/efef\x07"},
		{"OSC 104 resets one", "\x1b]4;3;#abcdef\x07\x1b]104;3\x07\x1b]4;3;?\x07", "\x1b]4;3;rgb:cdcd/cdcd/0000\x07"},
		{"DECRQM DECAWM", "\x1b[?7$p", "\x1b[?7;1$y"},
		{"DECRQM DECOM", "\x1b[?6h\x1b[?6$p", "\x1b[?6;1$y"},
		{"DECRQM DECCKM", "\x1b[?1$p", "\x1b[?1;2$y"},
		{"DECRQM 1049 on alt", "\x1b[?1049h\x1b[?1049$p", "\x1b[?1049;1$y"},
		{"DECRQM 47", "\x1b[?47$p", "\x1b[?47;2$y"},
		{"DECRQM DECNKM after DECKPAM", "\x1b=\x1b[?66$p", "\x1b[?66;1$y"},
		{"DECRQM DECNKM after DECKPNM", "\x1b=\x1b>\x1b[?66$p", "\x1b[?66;2$y"},
		{"DECRQM DECLRMM", "\x1b[?69h\x1b[?69$p", "\x1b[?69;1$y"},
		{"DECRQM inert mouse mode", "\x1b[?1006h\x1b[?1006$p", "\x1b[?1006;1$y"},
		{"DECRQM IRM", "\x1b[4h\x1b[4$p", "\x1b[4;1$y"},
		{"DECRQM LNM", "\x1b[20$p", "\x1b[20;2$y"},
		{"DECRQM unknown ANSI", "\x1b[99$p", "\x1b[99;0$y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(10, 5, Options{})
			s.Write([]byte(tc.in))
			if got := string(s.TakeReplies()); got != tc.want {
				t.Errorf("replies = %q, want %q", got, tc.want)
			}
			if u, _ := s.Unhandled(); len(u) != 0 {
				t.Errorf("unhandled: %v", u)
			}
		})
	}
}

// TestColorQueryBadInput: a colour the screen cannot parse is recorded as
// unhandled and changes nothing; the query after it still answers.
func TestColorQueryBadInput(t *testing.T) {
	s := New(10, 5, Options{})
	s.Write([]byte("\x1b]11;notacolour\x07\x1b]4;999;?\x07\x1b]11;?\x07"))
	if got, want := string(s.TakeReplies()), "\x1b]11;rgb:0000/0000/0000\x07"; got != want {
		t.Errorf("replies = %q, want %q", got, want)
	}
	u, _ := s.Unhandled()
	if len(u) != 2 || !strings.Contains(u[0].Sequence, "notacolour") {
		t.Errorf("unhandled = %v, want the two bad OSCs", u)
	}
}

// TestXTVersion: XTVERSION is answered with Options.Version as xterm does
// (DCS > | text ST), and left unanswered (recorded) without one.
func TestXTVersion(t *testing.T) {
	s := New(10, 5, Options{Version: "ptyplex(1.2.3)"})
	s.Write([]byte("\x1b[>q\x1b[>0q\x1b[>1q"))
	if got, want := string(s.TakeReplies()), "\x1bP>|ptyplex(1.2.3)\x1b\\\x1bP>|ptyplex(1.2.3)\x1b\\"; got != want {
		t.Errorf("replies = %q, want %q", got, want)
	}
	s = New(10, 5, Options{})
	s.Write([]byte("\x1b[>q"))
	if got := s.TakeReplies(); got != nil {
		t.Errorf("without a version: replies = %q, want none", got)
	}
	if u, _ := s.Unhandled(); len(u) != 1 {
		t.Errorf("without a version: unhandled = %v, want the query", u)
	}
}

// TestSettingAndTermcapQueries: DECRQSS reports the pen, the margins,
// the cursor style and the conformance level as the controls that set
// them, and DCS 0 $ r for a setting the screen does not keep; XTGETTCAP
// answers the terminal's name and colours in hex, each name on its own,
// DCS 0 + r for others. Split across writes, a query still answers once.
func TestSettingAndTermcapQueries(t *testing.T) {
	const st = "\x1b\\"
	cases := []struct{ name, in, want string }{
		{"SGR default", "\x1bP$qm" + st, "\x1bP1$r0m" + st},
		{"SGR set", "\x1b[1;4;31;48;5;200m\x1bP$qm" + st, "\x1bP1$r0;1;4;31;48;5;200m" + st},
		{"SGR truecolour", "\x1b[38;2;1;2;3m\x1bP$qm" + st, "\x1bP1$r0;38;2;1;2;3m" + st},
		{"SGR after reset", "\x1b[7m\x1b[0m\x1bP$qm" + st, "\x1bP1$r0m" + st},
		{"DECSTBM default", "\x1bP$qr" + st, "\x1bP1$r1;5r" + st},
		{"DECSTBM set", "\x1b[2;4r\x1bP$qr" + st, "\x1bP1$r2;4r" + st},
		{"DECSLRM set", "\x1b[?69h\x1b[3;8s\x1bP$qs" + st, "\x1bP1$r3;8s" + st},
		{"DECSCUSR default", "\x1bP$q q" + st, "\x1bP1$r2 q" + st},
		{"DECSCUSR bar", "\x1b[5 q\x1bP$q q" + st, "\x1bP1$r5 q" + st},
		{"DECSCL", "\x1bP$q\"p" + st, "\x1bP1$r62;1\"p" + st},
		{"DECSCA", "\x1bP$q\"q" + st, "\x1bP1$r0\"q" + st},
		{"DECRQSS unknown", "\x1bP$qx" + st, "\x1bP0$r" + st},
		{"XTGETTCAP TN", "\x1bP+q544e" + st, "\x1bP1+r544e=787465726D2D323536636F6C6F72" + st},
		{"XTGETTCAP Co and an unknown", "\x1bP+q436f;6b6375" + st, "\x1bP1+r436f=323536" + st + "\x1bP0+r6b6375" + st},
		{"XTGETTCAP bad hex", "\x1bP+qzz" + st, "\x1bP0+rzz" + st},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(10, 5, Options{})
			s.Write([]byte(tc.in))
			if got := string(s.TakeReplies()); got != tc.want {
				t.Errorf("replies = %q, want %q", got, tc.want)
			}
			if u, _ := s.Unhandled(); len(u) != 0 {
				t.Errorf("unhandled: %v", u)
			}
			// The same bytes one at a time: the same replies.
			s = New(10, 5, Options{})
			for i := range len(tc.in) {
				s.Write([]byte{tc.in[i]})
			}
			if got := string(s.TakeReplies()); got != tc.want {
				t.Errorf("byte by byte: replies = %q, want %q", got, tc.want)
			}
		})
	}
	// Other strings are no queries: recorded, unanswered.
	s := New(10, 5, Options{})
	s.Write([]byte("\x1bP1;2|abc" + st + "\x1b_apc" + st))
	if got := s.TakeReplies(); got != nil {
		t.Errorf("other strings: replies = %q, want none", got)
	}
	if u, _ := s.Unhandled(); len(u) != 2 {
		t.Errorf("other strings: unhandled = %v, want both", u)
	}
}
