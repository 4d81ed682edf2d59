package vtparse

import "unicode/utf8"

const (
	MaxParams = 32    // parameters beyond this make a CSI malformed
	MaxParam  = 65535 // larger values are clamped; no real sequence needs more
	MaxInter  = 2     // intermediates beyond this make a sequence malformed

	DefaultMaxRaw = 256  // Seq.Raw cap when Parser.MaxRaw is 0
	DefaultMaxOSC = 4096 // Seq.Data cap when Parser.MaxOSC is 0
)

// Parser splits a terminal output stream into text, controls and
// sequences. The zero value is ready to use. All state lives in the
// struct, so a sequence or a UTF-8 character split across Parse calls
// resumes where it stopped. It is not safe for concurrent use.
type Parser struct {
	// MaxRaw caps Seq.Raw and MaxOSC caps Seq.Data (0 means the
	// defaults). The caps bound memory against a runaway string; a filter
	// that re-emits sequences raises MaxRaw and treats Truncated ones as
	// it sees fit.
	MaxRaw, MaxOSC int

	state state
	seq   Seq

	raw     []byte
	params  [MaxParams]int
	sub     [MaxParams]bool
	nparams int // parameters started; 0 means none seen
	private byte
	intro   byte // a string's introducer: 'P', 'X', '^' or '_'
	inter   [MaxInter]byte
	ninter  int
	bad     bool
	trunc   bool
	osc     []byte

	utf8buf  [utf8.UTFMax]byte
	utf8len  int
	utf8need int
	// The bytes the second byte of the character being decoded may be:
	// narrower than 0x80-0xbf after E0, ED, F0 and F4, so that an overlong
	// form, a surrogate or a code point past U+10FFFF ends the character
	// at its first byte that cannot belong to it.
	utf8lo, utf8hi byte
}

// Parse feeds b to the parser, calling h for everything it completes.
func (p *Parser) Parse(b []byte, h Handler) {
	for i := 0; i < len(b); {
		switch p.state {
		case stGround:
			if p.utf8need == 0 {
				// Fast path: a run of printable ASCII goes out as one slice.
				if j := i + asciiRun(b[i:]); j > i {
					h.Print(b[i:j])
					i = j
					continue
				}
			}
			p.ground(b[i], h)
			i++
			continue
		case stCSIEntry, stCSIParam:
			// Parameters are most of a CSI's bytes: take digits in bulk.
			if n := p.csiDigits(b[i:]); n > 0 {
				i += n
				continue
			}
		case stOSCEsc, stStringEsc:
			p.afterStringEsc(b[i], h)
			i++
			continue
		}
		p.step(b[i], h)
		i++
	}
}

// step applies the table to one byte of a sequence.
func (p *Parser) step(c byte, h Handler) {
	t := table[p.state][c]
	p.state = t.next()
	switch t.action() {
	case acIgnore:
	case acExecute:
		h.Execute(c)
	case acAbort:
	case acEscape:
		p.begin()
	case acCollect:
		p.keep(c)
		if p.ninter < MaxInter {
			p.inter[p.ninter] = c
			p.ninter++
		} else {
			p.bad = true
		}
	case acParam:
		p.keep(c)
		p.param(c)
	case acPrivate:
		p.keep(c)
		p.private = c
	case acMalformed:
		p.keep(c)
		p.bad = true
	case acKeep:
		p.keep(c)
	case acEscDispatch:
		p.keep(c)
		h.ESC(p.finish(c))
	case acCSIDispatch:
		p.keep(c)
		h.CSI(p.finish(c))
	case acOSCStart:
		p.keep(c)
		p.osc = p.osc[:0]
	case acOSCPut:
		p.keep(c)
		if len(p.osc) < p.maxOSC() {
			p.osc = append(p.osc, c)
		}
	case acOSCEnd:
		p.keep(c)
		s := p.finish(']')
		s.Data, s.BEL = p.osc, true
		h.OSC(s)
	case acStringStart:
		p.keep(c)
		p.intro = c
	}
}

// afterStringEsc decides what an ESC inside an OSC or a string meant: with
// a backslash it was ST; otherwise the string ends there and the ESC
// starts a new sequence.
func (p *Parser) afterStringEsc(c byte, h Handler) {
	osc := p.state == stOSCEsc
	p.state = stGround
	if c == '\\' {
		p.keep(0x1b)
		p.keep(c)
	}
	if osc {
		s := p.finish(']')
		s.Data = p.osc
		h.OSC(s)
	} else {
		h.String(p.finish(p.intro))
	}
	if c != '\\' {
		p.begin()
		p.state = stEscape
		p.step(c, h)
	}
}

// ground handles a byte outside any sequence that the ASCII fast path did
// not take: controls, ESC and UTF-8.
//
// Malformed UTF-8 is cut into the pieces the Unicode standard recommends
// (its "maximal subparts", as Rust's and Go's own decoders do): each
// piece is one utf8.RuneError, and the byte that broke a character is
// looked at afresh. That is what alacritty (vte), the emulator of
// interminai's xterm mode, shows. A byte 0x80-0x9f that belongs to no
// character is an 8-bit C1 control, which alacritty and xterm.js both
// show nothing for: it goes to a C1Handler, or as utf8.RuneError to
// another handler.
func (p *Parser) ground(c byte, h Handler) {
	if p.utf8need > 0 {
		lo, hi := byte(0x80), byte(0xbf)
		if p.utf8len == 1 {
			lo, hi = p.utf8lo, p.utf8hi
		}
		if c >= lo && c <= hi {
			p.utf8buf[p.utf8len] = c
			p.utf8len++
			if p.utf8len == p.utf8need {
				p.utf8need = 0
				r, _ := utf8.DecodeRune(p.utf8buf[:p.utf8len])
				h.PrintRune(r)
			}
			return
		}
		// Truncated sequence: show a replacement and look at c afresh.
		p.utf8need = 0
		h.PrintRune(utf8.RuneError)
	}
	switch {
	case c == 0x1b:
		p.begin()
		p.state = stEscape
	case c < 0x20:
		h.Execute(c)
	case c < 0x7f:
		h.PrintRune(rune(c))
	case c == 0x7f: // DEL is ignored
	case c <= 0x9f:
		if c1, ok := h.(C1Handler); ok {
			c1.ExecuteC1(c)
		} else {
			h.PrintRune(utf8.RuneError)
		}
	case c >= 0xc2 && c <= 0xdf:
		p.startUTF8(c, 2)
	case c >= 0xe0 && c <= 0xef:
		p.startUTF8(c, 3)
	case c >= 0xf0 && c <= 0xf4:
		p.startUTF8(c, 4)
	default: // a stray continuation byte, C0, C1 or F5-FF: never valid
		h.PrintRune(utf8.RuneError)
	}
}

func (p *Parser) startUTF8(c byte, n int) {
	p.utf8buf[0] = c
	p.utf8len = 1
	p.utf8need = n
	p.utf8lo, p.utf8hi = 0x80, 0xbf
	switch c {
	case 0xe0:
		p.utf8lo = 0xa0 // below is an overlong form
	case 0xed:
		p.utf8hi = 0x9f // above are the surrogates
	case 0xf0:
		p.utf8lo = 0x90 // below is an overlong form
	case 0xf4:
		p.utf8hi = 0x8f // above is past U+10FFFF
	}
}

// begin starts a new sequence at an ESC.
func (p *Parser) begin() {
	p.raw = append(p.raw[:0], 0x1b)
	p.nparams = 0
	p.private = 0
	p.ninter = 0
	p.bad = false
	p.trunc = false
}

func (p *Parser) maxRaw() int {
	if p.MaxRaw > 0 {
		return p.MaxRaw
	}
	return DefaultMaxRaw
}

func (p *Parser) maxOSC() int {
	if p.MaxOSC > 0 {
		return p.MaxOSC
	}
	return DefaultMaxOSC
}

func (p *Parser) keep(c byte) {
	if len(p.raw) < p.maxRaw() {
		p.raw = append(p.raw, c)
	} else {
		p.trunc = true
	}
}

func (p *Parser) keepAll(b []byte) {
	room := p.maxRaw() - len(p.raw)
	if room < len(b) {
		p.trunc = true
	}
	if room > 0 {
		p.raw = append(p.raw, b[:min(room, len(b))]...)
	}
}

// param takes a digit or a separator of a CSI's parameters.
func (p *Parser) param(c byte) {
	if p.nparams == 0 {
		p.nparams = 1
		p.params[0], p.sub[0] = 0, false
	}
	if c >= '0' && c <= '9' {
		v := &p.params[p.nparams-1]
		if *v = *v*10 + int(c-'0'); *v > MaxParam {
			*v = MaxParam
		}
		return
	}
	if p.nparams == MaxParams {
		p.bad = true
		p.state = stCSIIgnore
		return
	}
	p.params[p.nparams], p.sub[p.nparams] = 0, c == ':'
	p.nparams++
}

// csiDigits consumes a run of parameter digits and ';' separators
// without going through the table, and reports how many bytes it took.
// Anything unusual is left to step.
func (p *Parser) csiDigits(b []byte) int {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			if p.nparams == 0 {
				p.nparams = 1
				p.params[0], p.sub[0] = 0, false
			}
			v := &p.params[p.nparams-1]
			if *v = *v*10 + int(c-'0'); *v > MaxParam {
				*v = MaxParam
			}
		case c == ';' && p.nparams > 0 && p.nparams < MaxParams:
			p.params[p.nparams], p.sub[p.nparams] = 0, false
			p.nparams++
		default:
			p.keepAll(b[:i])
			if i > 0 {
				p.state = stCSIParam
			}
			return i
		}
	}
	p.keepAll(b[:i])
	if i > 0 {
		p.state = stCSIParam
	}
	return i
}

// finish fills in the Seq handed to the handler.
func (p *Parser) finish(final byte) *Seq {
	s := &p.seq
	*s = Seq{
		Final:     final,
		Private:   p.private,
		Params:    p.params[:p.nparams],
		Sub:       p.sub[:p.nparams],
		Inter:     p.inter[:p.ninter],
		Malformed: p.bad,
		Raw:       p.raw,
		Truncated: p.trunc,
	}
	return s
}

// InSequence reports whether the parser stopped inside a sequence (or a
// UTF-8 character): the next bytes it is fed continue it.
func (p *Parser) InSequence() bool { return p.state != stGround || p.utf8need != 0 }

// ParseSequence is Parse for a reader that skips text itself and hands
// the parser only what begins at an ESC: it takes bytes from b until the
// parser is back outside any sequence (one byte at least), calls h for
// what they complete as Parse does, and reports how many it took. Text
// after the sequence is left for the caller.
func (p *Parser) ParseSequence(b []byte, h Handler) int {
	i := 0
	for i < len(b) {
		switch p.state {
		case stGround:
			if i > 0 && p.utf8need == 0 {
				return i
			}
			p.ground(b[i], h)
			i++
			continue
		case stCSIEntry, stCSIParam:
			if n := p.csiDigits(b[i:]); n > 0 {
				i += n
				continue
			}
		case stOSCEsc, stStringEsc:
			p.afterStringEsc(b[i], h)
			i++
			continue
		}
		p.step(b[i], h)
		i++
	}
	return i
}
