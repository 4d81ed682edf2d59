package termfilter

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen/vtparse"
)

func filterString(opts Options, in string) string {
	return string(New(opts).Append(nil, []byte(in)))
}

func TestFilterDrops(t *testing.T) {
	cases := []struct{ name, in string }{
		{"OSC 52 clipboard write, BEL", "\x1b]52;c;aHVudGVyMg==\x07"},
		{"OSC 52 clipboard write, ST", "\x1b]52;c;aHVudGVyMg==\x1b\\"},
		{"OSC 52 clipboard read", "\x1b]52;c;?\x07"},
		{"OSC 0 title", "\x1b]0;owned\x07"},
		{"OSC 1 icon name", "\x1b]1;owned\x07"},
		{"OSC 2 title", "\x1b]2;owned\x1b\\"},
		{"OSC 4 palette query", "\x1b]4;1;?\x07"},
		{"OSC 4 palette set", "\x1b]4;1;rgb:ff/00/00\x07"},
		{"OSC 10 foreground query", "\x1b]10;?\x07"},
		{"OSC 11 background query", "\x1b]11;?\x1b\\"},
		{"OSC 12 cursor colour query", "\x1b]12;?\x07"},
		{"OSC 7 working directory", "\x1b]7;file:///etc\x07"},
		{"OSC 9 notification", "\x1b]9;hello\x07"},
		{"OSC 777 notification", "\x1b]777;notify;a;b\x07"},
		{"OSC 1337 iTerm file", "\x1b]1337;File=inline=1:AAAA\x07"},
		{"OSC 50 font query", "\x1b]50;?\x07"},
		{"OSC without a number", "\x1b]x;y\x07"},
		{"OSC 8 holding C1 controls as UTF-8", "\x1b]8;;http://x\u009c\u009d52;c;SEVMTE8=\x07"},
		{"OSC 8 holding raw 8-bit C1 bytes", "\x1b]8;;http://x\x9c\x9d52;c;SEVMTE8=\x07"},
		{"OSC 133 holding a C1 control", "\x1b]133;A;\u009b31m\x07"},
		{"DECRQSS", "\x1bP$qm\x1b\\"},
		{"XTGETTCAP", "\x1bP+q544e\x1b\\"},
		{"sixel", "\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\"},
		{"SOS", "\x1bXsos\x1b\\"},
		{"PM", "\x1b^pm\x1b\\"},
		{"APC", "\x1b_Gf=100;AAAA\x1b\\"},
		{"title report CSI 21 t", "\x1b[21t"},
		{"icon report CSI 20 t", "\x1b[20t"},
		{"pixel size report CSI 14 t", "\x1b[14t"},
		{"text area report CSI 18 t", "\x1b[18t"},
		{"screen size report CSI 19 t", "\x1b[19t"},
		{"window resize CSI 8 t", "\x1b[8;100;300t"},
		{"window move CSI 3 t", "\x1b[3;0;0t"},
		{"iconify CSI 2 t", "\x1b[2t"},
		{"DA1", "\x1b[c"},
		{"DA1 with 0", "\x1b[0c"},
		{"DA2", "\x1b[>c"},
		{"DA3", "\x1b[=c"},
		{"XTVERSION", "\x1b[>q"},
		{"DSR status", "\x1b[5n"},
		{"DSR cursor", "\x1b[6n"},
		{"DEC DSR cursor", "\x1b[?6n"},
		{"DECRQM private", "\x1b[?2004$p"},
		{"DECRQM ANSI", "\x1b[4$p"},
		{"DECREQTPARM", "\x1b[x"},
		{"media copy", "\x1b[5i"},
		{"kitty keyboard query", "\x1b[?u"},
		{"kitty keyboard push", "\x1b[>1u"},
		{"modifyOtherKeys", "\x1b[>4;2m"},
		{"keyboard lock", "\x1b[2h"},
		{"local echo", "\x1b[12l"},
		{"unknown DEC mode", "\x1b[?1001h"},
		{"DECID", "\x1bZ"},
		{"S8C1T", "\x1b G"},
		{"UTF-8 off", "\x1b%@"},
		{"malformed CSI", "\x1b[1?h"},
		{"ESC with two intermediates", "\x1b(%5"},
		{"CSI with two intermediates", "\x1b[1 !p"},
		{"ENQ answerback", "\x05"},
		{"NUL", "\x00"},
		{"C1 CSI as UTF-8", "\u009b6n"[:2]},
		{"C1 OSC as UTF-8", "\u009d"},
		{"8-bit C1 CSI", "\x9b"},
	}
	for _, c := range cases {
		in := "a" + c.in + "b"
		want := "ab" // a stray 8-bit C1 byte shows nothing, as in the session
		if got := filterString(Options{}, in); got != want {
			t.Errorf("%s: %q came out as %q, want %q", c.name, in, got, want)
		}
	}
}

func TestFilterPasses(t *testing.T) {
	for _, in := range []string{
		"plain text, ünïcödé, 中文, 🎉",
		"\a\b\t\n\v\f\r\x0e\x0f",
		"\x1b[31mred\x1b[0m \x1b[38;2;1;2;3mtrue\x1b[38:5:200mcolon\x1b[4:3m\x1b[m",
		"\x1b[H\x1b[12;40H\x1b[5A\x1b[B\x1b[3C\x1b[D\x1b[E\x1b[F\x1b[7G\x1b[3d\x1b[9`\x1b[2a\x1b[e\x1b[2I\x1b[Z\x1b[3;4f",
		"\x1b[J\x1b[2J\x1b[K\x1b[1K\x1b[3X\x1b[2@\x1b[P\x1b[L\x1b[2M\x1b[3b\x1b[S\x1b[2T\x1b[?2J\x1b[?K",
		"\x1b[2;20r\x1b[r\x1b[s\x1b[u\x1b[3g\x1b[4h\x1b[4l\x1b[20h",
		"\x1b[?1049h\x1b[?1049l\x1b[?47h\x1b[?1047l\x1b[?1048h",
		"\x1b[?2004h\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1006h\x1b[?1015h\x1b[?1016l\x1b[?1005l\x1b[?9h\x1b[?1004h",
		"\x1b[?1h\x1b[?5h\x1b[?6l\x1b[?7l\x1b[?25l\x1b[?69h\x1b[?2026h\x1b[?1;1049s\x1b[?1;1049r",
		"\x1b[2 q\x1b[!p\x1b[22;0t\x1b[23;0t",
		"\x1b7\x1b8\x1bD\x1bE\x1bH\x1bM\x1b=\x1b>\x1bc\x1b(0\x1b(B\x1b)0\x1b#8\x1b#6\x1bn\x1bo",
		"\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\",
		"\x1b]133;A\x07$ \x1b]133;B\x07",
	} {
		if got := filterString(Options{}, in); got != in {
			t.Errorf("%q came out as %q", in, got)
		}
	}
}

// The session's key in the shell integration's marks stays in the session:
// the marks pass without it, the rest of them as they were.
func TestFilterStripsMarkKey(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b]133;A;ptyplex=0123abcd\x07$ ":       "\x1b]133;A\x07$ ",
		"\x1b]133;D;2;ptyplex=0123abcd\x1b\\":     "\x1b]133;D;2\x1b\\",
		"\x1b]133;A;aid=7;ptyplex=k;cl=m\x07":     "\x1b]133;A;aid=7;cl=m\x07",
		"\x1b]133;C;ptyplex=k;ptyplex=j\x07after": "\x1b]133;C\x07after",
	} {
		if got := filterString(Options{}, in); got != want {
			t.Errorf("%q came out as %q, want %q", in, got, want)
		}
	}
}

// A mark cut short by the string cap is dropped whole: passing what was
// kept of it could pass part of the key.
func TestFilterDropsTruncatedMark(t *testing.T) {
	in := "a\x1b]133;A;ptyplex=" + strings.Repeat("0123abcd", 8) + "\x07b"
	if got := filterString(Options{MaxString: 32}, in); got != "ab" {
		t.Errorf("%q with MaxString 32 came out as %q, want %q", in, got, "ab")
	}
	if got := filterString(Options{MaxString: 32}, "a\x1b]133;A\x07b"); got != "a\x1b]133;A\x07b" {
		t.Errorf("a short mark under the same cap came out as %q", got)
	}
}

func TestFilterOptions(t *testing.T) {
	clip := "\x1b]52;c;aGk=\x07"
	title := "\x1b]2;mine\x1b\\\x1b]0;both\x07\x1b]1;icon\x07"
	if got := filterString(Options{AllowClipboard: true}, "a"+clip+title+"b"); got != "a"+clip+"b" {
		t.Errorf("AllowClipboard: %q", got)
	}
	if got := filterString(Options{AllowTitle: true}, "a"+clip+title+"b"); got != "a"+title+"b" {
		t.Errorf("AllowTitle: %q", got)
	}
	// A clipboard read would type the clipboard into the session:
	// dropped even when writes are allowed.
	for _, read := range []string{"\x1b]52;c;?\x07", "\x1b]52;;?\x1b\\", "\x1b]52;c\x07"} {
		if got := filterString(Options{AllowClipboard: true}, "a"+read+"b"); got != "ab" {
			t.Errorf("AllowClipboard passed the read %q: %q", read, got)
		}
	}
	// An empty selection list and empty data (clear the clipboard) is a
	// write.
	if in := "\x1b]52;;\x07"; filterString(Options{AllowClipboard: true}, in) != in {
		t.Errorf("AllowClipboard dropped the clear %q", in)
	}
}

func TestFilterModesReencoded(t *testing.T) {
	// Kept and dropped modes in one sequence: only the kept ones go out.
	for in, want := range map[string]string{
		"\x1b[?1049;1001;2004h": "\x1b[?1049;2004h",
		"\x1b[?1001;1049l":      "\x1b[?1049l",
		"\x1b[2;4h":             "\x1b[4h",
		"\x1b[?1001;9999h":      "",
	} {
		if got := filterString(Options{}, in); got != want {
			t.Errorf("%q came out as %q, want %q", in, got, want)
		}
	}
}

// mixedStream has a sequence of every kind, kept and dropped, and
// multi-byte characters, so that splitting it anywhere cuts through each.
const mixedStream = "héllo\x1b[1;31mred\x1b[0m\x1b]52;c;aGk=\x07中\x1b]2;t\x1b\\" +
	"\x1bP$qm\x1b\\\x1b[21t\x1b[?1049;2004h🎉\x1b]8;;u\x1b\\x\x1b]8;;\x07\x1b(0q\x1b(B\r\n" +
	"\x1b[6n\x1b[?1001;25l\x1b_apc\x1b\\\x05end"

func TestFilterSplitAtEveryByte(t *testing.T) {
	for _, opts := range []Options{{}, {AllowClipboard: true, AllowTitle: true}} {
		whole := filterString(opts, mixedStream)
		for i := 0; i <= len(mixedStream); i++ {
			f := New(opts)
			out := f.Append(nil, []byte(mixedStream[:i]))
			out = f.Append(out, []byte(mixedStream[i:]))
			if string(out) != whole {
				t.Fatalf("%+v: split at %d: %q, whole: %q", opts, i, out, whole)
			}
		}
		// And one byte a write.
		f := New(opts)
		var out []byte
		for i := range len(mixedStream) {
			out = f.Append(out, []byte{mixedStream[i]})
		}
		if string(out) != whole {
			t.Fatalf("%+v: byte by byte: %q, whole: %q", opts, out, whole)
		}
	}
	want := "héllo\x1b[1;31mred\x1b[0m中\x1b[?1049;2004h🎉\x1b]8;;u\x1b\\x\x1b]8;;\x07\x1b(0q\x1b(B\r\n\x1b[?25lend"
	if got := filterString(Options{}, mixedStream); got != want {
		t.Errorf("mixed stream:\n got %q\nwant %q", got, want)
	}
}

// TestFilterUnterminatedString: a string that never ends is dropped, the
// filter's memory stays at its cap however long it runs, and the stream
// after its terminator passes again.
func TestFilterUnterminatedString(t *testing.T) {
	for _, intro := range []string{"\x1b]52;c;", "\x1b]2;", "\x1bP"} {
		var out bytes.Buffer
		w := NewWriter(&out, Options{AllowClipboard: true, AllowTitle: true})
		chunk := bytes.Repeat([]byte("A"), 64<<10)
		// The first megabyte fills the parser's buffers up to their caps;
		// the other nine must not allocate at all.
		w.Write([]byte("x" + intro))
		for range (1 << 20) / len(chunk) {
			w.Write(chunk)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range (9 << 20) / len(chunk) {
			w.Write(chunk)
		}
		runtime.ReadMemStats(&after)
		w.Write([]byte("\x1b\\after"))
		if got := out.String(); got != "xafter" {
			t.Errorf("%q + 10 MB: %q came out", intro, got[:min(len(got), 80)])
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<10 {
			t.Errorf("%q: the 9 MB after the first allocated %d bytes: the filter keeps the string", intro, grew)
		}
	}
	// Just over the cap is dropped; at the cap passes.
	for n, passes := range map[int]bool{100: true, 101: false} {
		in := "\x1b]52;c;" + strings.Repeat("A", n-len("52;c;")) + "\x07"
		got := filterString(Options{AllowClipboard: true, MaxString: 100}, in)
		if (got == in) != passes || (!passes && got != "") {
			t.Errorf("an OSC of %d bytes with MaxString 100: %q", n, got)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriterErrors(t *testing.T) {
	w := NewWriter(failWriter{}, Options{})
	if _, err := w.Write([]byte("\x1b]2;x\x07")); err != nil {
		t.Errorf("nothing to write, yet: %v", err)
	}
	if n, err := w.Write([]byte("text")); err == nil || n != 0 {
		t.Errorf("a failed write reported %d, %v", n, err)
	}
}

// A write of over a megabyte passes whole, and the Writer does not keep a
// buffer of that size for the rest of the stream.
func TestWriterLargeWrite(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, Options{})
	big := bytes.Repeat([]byte("0123456789abcde\n"), (2<<20)/16)
	if n, err := w.Write(big); err != nil || n != len(big) {
		t.Fatalf("Write: %d, %v", n, err)
	}
	if !bytes.Equal(out.Bytes(), big) {
		t.Fatalf("2 MiB of text came out as %d bytes, changed", out.Len())
	}
	if w.buf != nil {
		t.Errorf("the Writer keeps a buffer of %d bytes after the large write", cap(w.buf))
	}
	out.Reset()
	if _, err := w.Write([]byte("small")); err != nil || out.String() != "small" {
		t.Errorf("the write after: %q, %v", out.String(), err)
	}
	if cap(w.buf) > 1<<20 {
		t.Errorf("a small write left a buffer of %d bytes", cap(w.buf))
	}
}

// BenchmarkFilter runs a mixed terminal stream (text, colours, cursor
// moves) through the filter; BenchmarkCopy is the plain copy that attach
// did before, for the ratio.
func BenchmarkFilter(b *testing.B) {
	in := benchStream()
	f := New(Options{})
	var out []byte
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		out = f.Append(out[:0], in)
	}
}

func BenchmarkCopy(b *testing.B) {
	in := benchStream()
	var out []byte
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		out = append(out[:0], in...)
	}
}

// benchStream is 1 MiB of what a busy full-screen program writes: lines
// of text with colour changes and a cursor move each, a title now and then.
func benchStream() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString("\x1b[12;1H\x1b[1;32mok\x1b[0m  build step finished in 0.42s: pkg/some/path ünï\r\n")
		if i%50 == 0 {
			b.WriteString("\x1b]2;title\x07\x1b[?25l\x1b[?25h")
		}
	}
	return b.Bytes()
}

// BenchmarkParse is the parser alone with a handler that does nothing:
// the floor under any filter built on it.
func BenchmarkParse(b *testing.B) {
	in := benchStream()
	var p vtparse.Parser
	p.MaxRaw, p.MaxOSC = DefaultMaxString+8, DefaultMaxString+1
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		p.Parse(in, nopHandler{})
	}
}

type nopHandler struct{}

func (nopHandler) Print([]byte)        {}
func (nopHandler) PrintRune(rune)      {}
func (nopHandler) Execute(byte)        {}
func (nopHandler) CSI(*vtparse.Seq)    {}
func (nopHandler) ESC(*vtparse.Seq)    {}
func (nopHandler) OSC(*vtparse.Seq)    {}
func (nopHandler) String(*vtparse.Seq) {}
