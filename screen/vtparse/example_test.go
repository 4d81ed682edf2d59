package vtparse_test

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/screen/vtparse"
)

// dropClipboard passes a stream on without OSC 52 (clipboard access) and
// without any DCS string.
type dropClipboard struct{ out bytes.Buffer }

func (f *dropClipboard) Print(text []byte)   { f.out.Write(text) }
func (f *dropClipboard) PrintRune(r rune)    { f.out.Write(utf8.AppendRune(nil, r)) }
func (f *dropClipboard) Execute(c byte)      { f.out.WriteByte(c) }
func (f *dropClipboard) CSI(s *vtparse.Seq)  { f.keep(s) }
func (f *dropClipboard) ESC(s *vtparse.Seq)  { f.keep(s) }
func (f *dropClipboard) String(*vtparse.Seq) {}
func (f *dropClipboard) OSC(s *vtparse.Seq) {
	if !bytes.HasPrefix(s.Data, []byte("52;")) {
		f.keep(s)
	}
}

func (f *dropClipboard) keep(s *vtparse.Seq) {
	if !s.Truncated {
		f.out.Write(s.Raw)
	}
}

func Example_filter() {
	var p vtparse.Parser
	p.MaxRaw = 1 << 16
	f := &dropClipboard{}
	p.Parse([]byte("a\x1b[1mb\x1b]52;c;aGk=\x07c\x1bP1$r\x1b\\d\x1b]0;title\x1b\\"), f)
	fmt.Printf("%q\n", f.out.String())
	// Output: "a\x1b[1mbcd\x1b]0;title\x1b\\"
}
