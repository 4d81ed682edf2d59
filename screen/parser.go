package screen

import "unicode/utf8"

// The parser is a byte-at-a-time state machine in the style of the DEC
// VT500 series (as described by Paul Williams), reduced to the states
// that change behaviour. All state lives in the struct, so a sequence or
// a UTF-8 character split across Write calls resumes where it stopped.

type parseState uint8

const (
	stateGround    parseState = iota
	stateEscape               // after ESC
	stateEscInter             // ESC followed by intermediates (ESC ( 0, ESC # 8)
	stateCSI                  // after ESC [, collecting parameters
	stateOSC                  // after ESC ], collecting the string
	stateOSCEsc               // ESC seen inside an OSC string: ST or a new sequence
	stateString               // DCS, SOS, PM, APC: consumed until ST
	stateStringEsc            // ESC seen inside such a string
)

const (
	maxParams = 32
	maxParam  = 65535 // larger values are clamped; no real sequence needs more
	maxOSC    = 4096  // titles longer than this are truncated
)

type parser struct {
	state parseState

	// raw holds the bytes of the sequence being parsed (capped), so an
	// unhandled one can be reported exactly as received.
	raw []byte

	params  [maxParams]int
	sub     [maxParams]bool // params[i] was introduced by ':' (a sub-parameter)
	nparams int             // number of params started; 0 means none seen
	private byte            // '?', '>', '<' or '=' prefix, 0 if none
	inter   [2]byte
	ninter  int
	bad     bool // malformed CSI: consume to the final byte, then record it

	osc    []byte
	oscBEL bool // the OSC string ended with BEL (replies use the same terminator)

	utf8buf  [utf8.UTFMax]byte
	utf8len  int
	utf8need int
}

func (p *parser) begin(state parseState) {
	p.state = state
	p.raw = append(p.raw[:0], 0x1b)
	p.nparams = 0
	p.private = 0
	p.ninter = 0
	p.bad = false
}

func (p *parser) keep(b byte) {
	if len(p.raw) < maxRecorded {
		p.raw = append(p.raw, b)
	}
}

// param returns parameter i, or def when it is absent or zero. Zero and
// absent mean the same thing for every sequence that has a default.
func (p *parser) param(i, def int) int {
	if i >= p.nparams || p.params[i] == 0 {
		return def
	}
	return p.params[i]
}

// Write feeds bytes from the PTY. It always consumes all of p and never
// returns an error; replies to queries accumulate for TakeReplies.
func (s *Screen) Write(p []byte) (int, error) {
	for i := 0; i < len(p); {
		if s.parser.state == stateGround && s.parser.utf8need == 0 {
			// Fast path: a run of printable ASCII goes straight to cells.
			j := i + asciiRun(p[i:])
			if j > i {
				s.printASCII(p[i:j])
				i = j
				continue
			}
		}
		if s.parser.state == stateCSI {
			// Parameters are most of a CSI's bytes: take digits in bulk.
			if n := s.parser.csiDigits(p[i:]); n > 0 {
				i += n
				continue
			}
		}
		s.step(p[i])
		i++
	}
	return len(p), nil
}

// csiDigits consumes a run of parameter digits and ';' separators
// without going through the per-byte dispatch, and reports how many
// bytes it took. Anything unusual is left to csiByte.
func (p *parser) csiDigits(b []byte) int {
	if p.ninter > 0 {
		return 0
	}
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
			if *v = *v*10 + int(c-'0'); *v > maxParam {
				*v = maxParam
			}
		case c == ';' && p.nparams > 0 && p.nparams < maxParams:
			p.params[p.nparams], p.sub[p.nparams] = 0, false
			p.nparams++
		default:
			p.keepAll(b[:i])
			return i
		}
	}
	p.keepAll(b[:i])
	return i
}

func (p *parser) keepAll(b []byte) {
	if room := maxRecorded - len(p.raw); room > 0 {
		p.raw = append(p.raw, b[:min(room, len(b))]...)
	}
}

// isExecuted reports C0 controls that act immediately even in the middle
// of an escape sequence, as on real terminals.
func isExecuted(b byte) bool {
	return b < 0x20 && b != 0x18 && b != 0x1a && b != 0x1b
}

func (s *Screen) step(b byte) {
	p := &s.parser
	switch p.state {
	case stateGround:
		s.ground(b)

	case stateEscape:
		switch {
		case isExecuted(b):
			s.execute(b)
		case b == 0x18 || b == 0x1a:
			p.state = stateGround
		case b == 0x1b:
			p.begin(stateEscape)
		case b >= 0x20 && b <= 0x2f:
			p.keep(b)
			p.inter[0] = b
			p.ninter = 1
			p.state = stateEscInter
		case b == '[':
			p.keep(b)
			p.state = stateCSI
			p.params[0], p.sub[0] = 0, false
		case b == ']':
			p.keep(b)
			p.osc = p.osc[:0]
			p.state = stateOSC
		case b == 'P' || b == 'X' || b == '^' || b == '_':
			p.keep(b)
			p.state = stateString
		case b >= 0x30 && b <= 0x7e:
			p.keep(b)
			p.state = stateGround
			s.escDispatch(b)
		default: // DEL and 8-bit bytes are ignored inside sequences
		}

	case stateEscInter:
		switch {
		case isExecuted(b):
			s.execute(b)
		case b == 0x18 || b == 0x1a:
			p.state = stateGround
		case b == 0x1b:
			p.begin(stateEscape)
		case b >= 0x20 && b <= 0x2f:
			p.keep(b)
			if p.ninter < len(p.inter) {
				p.inter[p.ninter] = b
				p.ninter++
			} else {
				p.bad = true
			}
		case b >= 0x30 && b <= 0x7e:
			p.keep(b)
			p.state = stateGround
			s.escDispatch(b)
		}

	case stateCSI:
		s.csiByte(b)

	case stateOSC:
		switch {
		case b == 0x07:
			p.keep(b)
			p.state = stateGround
			p.oscBEL = true
			s.oscDispatch()
		case b == 0x1b:
			p.state = stateOSCEsc
		case b == 0x18 || b == 0x1a:
			p.state = stateGround
		case b < 0x20: // other controls are ignored inside strings
		default:
			p.keep(b)
			if len(p.osc) < maxOSC {
				p.osc = append(p.osc, b)
			}
		}

	case stateOSCEsc:
		p.state = stateGround
		p.oscBEL = false
		if b == '\\' {
			p.keep(0x1b)
			p.keep(b)
			s.oscDispatch()
			return
		}
		// A bare ESC ends the string and starts a new sequence.
		s.oscDispatch()
		p.begin(stateEscape)
		s.step(b)

	case stateString:
		switch {
		case b == 0x1b:
			p.state = stateStringEsc
		case b == 0x18 || b == 0x1a:
			p.state = stateGround
		default:
			p.keep(b)
		}

	case stateStringEsc:
		p.state = stateGround
		if b == '\\' {
			p.keep(0x1b)
			p.keep(b)
			s.recordUnhandled()
			return
		}
		s.recordUnhandled()
		p.begin(stateEscape)
		s.step(b)
	}
}

// ground handles a byte outside any sequence that the ASCII fast path did
// not take: controls, ESC and UTF-8.
func (s *Screen) ground(b byte) {
	p := &s.parser
	if p.utf8need > 0 {
		if b&0xc0 == 0x80 {
			p.utf8buf[p.utf8len] = b
			p.utf8len++
			if p.utf8len == p.utf8need {
				p.utf8need = 0
				r, _ := utf8.DecodeRune(p.utf8buf[:p.utf8len])
				s.printRune(r)
			}
			return
		}
		// Truncated sequence: show a replacement and look at b afresh.
		p.utf8need = 0
		s.printRune(utf8.RuneError)
	}
	switch {
	case b == 0x1b:
		p.begin(stateEscape)
	case b < 0x20:
		s.execute(b)
	case b < 0x7f:
		s.printRune(rune(b))
	case b == 0x7f: // DEL is ignored
	case b&0xe0 == 0xc0:
		s.startUTF8(b, 2)
	case b&0xf0 == 0xe0:
		s.startUTF8(b, 3)
	case b&0xf8 == 0xf0:
		s.startUTF8(b, 4)
	default:
		s.printRune(utf8.RuneError)
	}
}

func (s *Screen) startUTF8(b byte, n int) {
	p := &s.parser
	p.utf8buf[0] = b
	p.utf8len = 1
	p.utf8need = n
}

// csiByte collects parameters and dispatches on the final byte.
func (s *Screen) csiByte(b byte) {
	p := &s.parser
	switch {
	case isExecuted(b):
		s.execute(b)
		return
	case b == 0x18 || b == 0x1a:
		p.state = stateGround
		return
	case b == 0x1b:
		p.begin(stateEscape)
		return
	case b == 0x7f || b >= 0x80:
		return
	}
	p.keep(b)
	switch {
	case b >= '0' && b <= '9':
		if p.ninter > 0 {
			p.bad = true
			return
		}
		if p.nparams == 0 {
			p.nparams = 1
			p.params[0], p.sub[0] = 0, false
		}
		v := &p.params[p.nparams-1]
		*v = *v*10 + int(b-'0')
		if *v > maxParam {
			*v = maxParam
		}
	case b == ';' || b == ':':
		if p.ninter > 0 {
			p.bad = true
			return
		}
		if p.nparams == 0 {
			p.nparams = 1
			p.params[0], p.sub[0] = 0, false
		}
		if p.nparams == maxParams {
			p.bad = true
			return
		}
		p.params[p.nparams] = 0
		p.sub[p.nparams] = b == ':'
		p.nparams++
	case b >= 0x3c && b <= 0x3f:
		if p.nparams > 0 || p.private != 0 || p.ninter > 0 {
			p.bad = true
			return
		}
		p.private = b
	case b >= 0x20 && b <= 0x2f:
		if p.ninter < len(p.inter) {
			p.inter[p.ninter] = b
			p.ninter++
		} else {
			p.bad = true
		}
	case b >= 0x40 && b <= 0x7e:
		p.state = stateGround
		if p.bad {
			s.recordUnhandled()
			return
		}
		s.csiDispatch(b)
	}
}
