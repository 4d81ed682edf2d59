package termfilter

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/screen/vtparse"
)

// Options lets through classes of sequences that are dropped by default.
type Options struct {
	// AllowClipboard passes OSC 52 clipboard writes (never reads).
	AllowClipboard bool
	// AllowTitle passes OSC 0, 1 and 2 (window title and icon name).
	AllowTitle bool
	// MaxString caps one OSC, DCS, SOS, PM or APC string, in bytes; 0
	// means DefaultMaxString. A longer string is dropped whole, and the
	// filter holds no more than about twice this much for it.
	MaxString int
}

// DefaultMaxString holds a clipboard write of about 48 KiB of text (OSC 52
// carries it in base64), which is more than a program that copies a
// selection sends, while an unterminated string costs little memory.
const DefaultMaxString = 64 << 10

// Filter is the filtering state of one stream. The zero value is not
// ready; use New. It is not safe for concurrent use.
type Filter struct {
	opts Options
	p    vtparse.Parser
	h    handler
}

// New returns a filter for one stream.
func New(opts Options) *Filter {
	if opts.MaxString <= 0 {
		opts.MaxString = DefaultMaxString
	}
	f := &Filter{opts: opts}
	// One byte over the cap tells a string that reached it from one
	// that fits; Raw also holds the introducer and the terminator, and a
	// string whose Raw is cut short is Truncated and dropped.
	f.p.MaxOSC = opts.MaxString + 1
	f.p.MaxRaw = opts.MaxString + 8
	f.h.opts = &f.opts
	return f
}

// Append filters p and appends what passes to dst. Bytes of a sequence
// that p leaves unfinished are held until a later call completes it.
func (f *Filter) Append(dst, p []byte) []byte {
	f.h.out = dst
	f.p.Parse(p, &f.h)
	dst = f.h.out
	f.h.out = nil
	return dst
}

// Writer filters everything written to it on its way to an underlying
// writer: one Write on w for each Write that leaves anything to pass.
type Writer struct {
	w   io.Writer
	f   *Filter
	buf []byte
}

// NewWriter returns a Writer that filters into w.
func NewWriter(w io.Writer, opts Options) *Writer {
	return &Writer{w: w, f: New(opts)}
}

// Write filters p and writes what passes. It reports len(p) when the
// underlying write succeeded: the bytes it dropped were consumed.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = w.f.Append(w.buf[:0], p)
	if len(w.buf) > 0 {
		if _, err := w.w.Write(w.buf); err != nil {
			return 0, fmt.Errorf("write filtered output: %w", err)
		}
	}
	// A long string once held must not pin its memory for the rest of
	// the stream.
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return len(p), nil
}

// handler decides, sequence by sequence, what passes.
type handler struct {
	opts *Options
	out  []byte
}

func (h *handler) Print(text []byte) { h.out = append(h.out, text...) }

func (h *handler) PrintRune(r rune) {
	if r >= 0x80 && r <= 0x9f {
		return
	}
	h.out = utf8.AppendRune(h.out, r)
}

// ExecuteC1 drops a stray byte 0x80-0x9f: the session's screen shows
// nothing for it (alacritty and xterm.js do the same), and passed on as
// it is, a terminal reading 8-bit controls would take it for one.
func (h *handler) ExecuteC1(byte) {}

// c0Kept has a bit set for each C0 control that passes.
const c0Kept = 1<<0x07 | 1<<0x08 | 1<<0x09 | 1<<0x0a | 1<<0x0b | 1<<0x0c | 1<<0x0d | 1<<0x0e | 1<<0x0f

func (h *handler) Execute(c byte) {
	if c < 32 && c0Kept&(1<<c) != 0 {
		h.out = append(h.out, c)
	}
}

func (h *handler) keep(s *vtparse.Seq) {
	if !s.Malformed && !s.Truncated {
		h.out = append(h.out, s.Raw...)
	}
}

func (h *handler) ESC(s *vtparse.Seq) {
	if len(s.Inter) == 0 {
		switch s.Final {
		case '7', '8', 'D', 'E', 'H', 'M', 'N', 'O', '=', '>', 'c', 'n', 'o', '|', '}', '~':
			h.keep(s)
		}
		return
	}
	if len(s.Inter) != 1 {
		return
	}
	switch s.Inter[0] {
	case '(', ')', '*', '+', '-', '.', '/': // designate a character set
		h.keep(s)
	case '#':
		switch s.Final {
		case '3', '4', '5', '6', '8':
			h.keep(s)
		}
	}
}

func (h *handler) CSI(s *vtparse.Seq) {
	if s.Malformed || s.Truncated {
		return
	}
	switch s.Private {
	case 0:
		h.plainCSI(s)
	case '?':
		h.privateCSI(s)
	}
	// Dropped with any other private marker: the queries (> c, > q, = c,
	// ? u, ...) and the keyboard protocols (xterm's > m, kitty's > u),
	// which change what keys send in a way the session neither tracks
	// nor undoes, so it would outlive a detach.
}

func (h *handler) plainCSI(s *vtparse.Seq) {
	if len(s.Inter) == 1 {
		switch {
		case s.Inter[0] == ' ' && s.Final == 'q', // DECSCUSR
			s.Inter[0] == '!' && s.Final == 'p': // DECSTR
			h.keep(s)
		}
		return
	}
	if len(s.Inter) != 0 {
		return
	}
	switch s.Final {
	case 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'f', '`', 'a', 'd', 'e', 'I', 'Z',
		'J', 'K', 'X', '@', 'P', 'L', 'M', 'b', 'S', 'T', 'm', 'r', 's', 'u', 'g':
		h.keep(s)
	case 'h', 'l':
		h.modes(s, ansiModes)
	case 't':
		// Only the title stack: the other window operations move or
		// resize the user's window or ask it to report.
		if p := s.Param(0, 0); (p == 22 || p == 23) && len(s.Params) <= 2 {
			h.keep(s)
		}
	}
	// Dropped: DA (c), DSR and CPR (n), DECREQTPARM (x), media copy (i),
	// the LEDs (q), and anything not named above.
}

func (h *handler) privateCSI(s *vtparse.Seq) {
	if len(s.Inter) != 0 {
		return // DECRQM (? $ p) and the like ask for answers
	}
	switch s.Final {
	case 'h', 'l', 's', 'r':
		h.modes(s, decModes)
	case 'J', 'K':
		h.keep(s)
	}
	// Dropped: DSR (? n), the kitty keyboard query (? u), and the rest.
}

// ansiModes and decModes are the modes that pass (see the package
// comment): they change how the screen is drawn or what keys send, and
// none makes the terminal report anything that was not typed or clicked.
var (
	ansiModes = modeSet(4, 20)
	decModes  = modeSet(1, 5, 6, 7, 9, 25, 47, 69, 1000, 1002, 1003, 1004,
		1005, 1006, 1015, 1016, 1047, 1048, 1049, 2004, 2026)
)

func modeSet(ms ...int) map[int]bool {
	m := make(map[int]bool, len(ms))
	for _, n := range ms {
		m[n] = true
	}
	return m
}

// modes passes a mode sequence whose modes are all allowed as it came,
// and one that mixes allowed and other modes re-encoded with the allowed
// ones only.
func (h *handler) modes(s *vtparse.Seq, allowed map[int]bool) {
	kept := 0
	for i, p := range s.Params {
		if allowed[p] && !s.Sub[i] {
			kept++
		}
	}
	switch kept {
	case 0:
		return
	case len(s.Params):
		h.keep(s)
		return
	}
	h.out = append(h.out, 0x1b, '[')
	if s.Private != 0 {
		h.out = append(h.out, s.Private)
	}
	first := true
	for i, p := range s.Params {
		if !allowed[p] || s.Sub[i] {
			continue
		}
		if !first {
			h.out = append(h.out, ';')
		}
		h.out = strconv.AppendInt(h.out, int64(p), 10)
		first = false
	}
	h.out = append(h.out, s.Final)
}

// keepOSC passes an OSC terminated: one that an ESC other than ST ended
// (the ESC starts the next sequence) arrives without a terminator of its
// own, and passed as it came it would swallow the text that follows it
// in the terminal that reads our output.
func (h *handler) keepOSC(s *vtparse.Seq) {
	if s.Malformed || s.Truncated {
		return
	}
	h.out = append(h.out, s.Raw...)
	if !s.BEL && !bytes.HasSuffix(s.Raw, []byte("\x1b\\")) && !bytes.HasSuffix(s.Raw, []byte{0x9c}) {
		h.out = append(h.out, 0x1b, '\\')
	}
}

// OSC passes hyperlinks and prompt marks, and titles and clipboard writes
// when the options allow them.
func (h *handler) OSC(s *vtparse.Seq) {
	if s.Truncated || len(s.Data) > h.opts.MaxString {
		return
	}
	n, rest, ok := oscNumber(s.Data)
	if !ok || !plainText(s.Data) {
		return
	}
	switch n {
	case 8:
		h.keepOSC(s)
	case 133:
		h.mark(s, rest)
	case 0, 1, 2:
		if h.opts.AllowTitle {
			h.keepOSC(s)
		}
	case 52:
		if h.opts.AllowClipboard && !clipboardRead(rest) {
			h.keepOSC(s)
		}
	}
}

// plainText reports whether the body of an OSC is valid UTF-8 without
// control characters. The parser ends an OSC at BEL, ESC or ST, but a C1
// control inside it (U+009D, say, or its raw 8-bit byte) is what a
// terminal that reads 8-bit controls takes for the start of another
// sequence: an OSC 52 clipboard write hidden in a hyperlink's URI.
func plainText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}

// mark passes a prompt mark without the session's key (the ptyplex=
// parameter of the shell integration's marks): the key is what tells the
// session's own marks from forged ones, and the terminal attach writes to
// (or a recording of it that a program could print back) must not get it.
func (h *handler) mark(s *vtparse.Seq, args []byte) {
	if s.Malformed || s.Truncated {
		return
	}
	if !bytes.Contains(args, []byte("ptyplex=")) {
		h.keepOSC(s)
		return
	}
	h.out = append(h.out, "\x1b]133"...)
	for _, p := range bytes.Split(args, []byte(";")) {
		if !bytes.HasPrefix(p, []byte("ptyplex=")) {
			h.out = append(h.out, ';')
			h.out = append(h.out, p...)
		}
	}
	if s.BEL {
		h.out = append(h.out, 0x07)
	} else {
		h.out = append(h.out, 0x1b, '\\')
	}
}

// String drops every DCS, SOS, PM and APC string: DECRQSS and XTGETTCAP
// ask for answers, and the rest (sixel images, tmux passthrough, terminal
// specific commands) reach beyond the screen the session emulates.
func (h *handler) String(*vtparse.Seq) {}

// oscNumber splits "52;c;data" into 52 and "c;data".
func oscNumber(d []byte) (n int, rest []byte, ok bool) {
	i := 0
	for i < len(d) && i < 6 && d[i] >= '0' && d[i] <= '9' {
		n = n*10 + int(d[i]-'0')
		i++
	}
	if i == 0 || (i < len(d) && d[i] != ';') {
		return 0, nil, false
	}
	if i < len(d) {
		i++
	}
	return n, d[i:], true
}

// clipboardRead tells "c;?" (send me the clipboard) from "c;BASE64" (set
// it): the data is the part after the selection letters.
func clipboardRead(rest []byte) bool {
	_, data, found := bytes.Cut(rest, []byte(";"))
	return !found || bytes.Equal(data, []byte("?"))
}
