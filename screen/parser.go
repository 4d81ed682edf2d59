package screen

import "github.com/ptyplex/ptyplex/screen/vtparse"

// Write feeds bytes from the PTY. It always consumes all of p and never
// returns an error; replies to queries accumulate for TakeReplies.
func (s *Screen) Write(p []byte) (int, error) {
	s.parser.Parse(p, (*vtHandler)(s))
	return len(p), nil
}

// vtHandler is the Screen as the parser's handler. It is a type of its
// own so that the handler methods stay out of Screen's API.
type vtHandler Screen

func (h *vtHandler) Print(text []byte) { (*Screen)(h).printASCII(text) }
func (h *vtHandler) PrintRune(r rune)  { (*Screen)(h).printRune(r) }

// ExecuteC1 takes a stray byte 0x80-0x9f and shows nothing for it, as
// alacritty (interminai's xterm mode) and xterm.js do: a binary file
// cat to the terminal keeps the layout they give it. It changes nothing
// else either, so a REP after it still repeats (vte's preceding
// character survives it too).
func (h *vtHandler) ExecuteC1(byte) {}

// Execute and every dispatch but SGR clear lastPrinted: REP repeats a
// character only when nothing that moves or edits came between it and the
// REP, as xterm and tmux do. SGR is the exception: interminai keeps the
// character across it (`X ESC[1m ESC[3b` gives XXXX, in bold), scripts
// written for interminai rely on that, and where its suite and xterm.js
// disagree its suite wins. SGR moves nothing, so the character's cell is
// still the one lastGrapheme finds.
func (h *vtHandler) Execute(c byte) {
	s := (*Screen)(h)
	s.lastPrinted = 0
	s.execute(c)
}

func (h *vtHandler) CSI(seq *vtparse.Seq) {
	s := (*Screen)(h)
	s.seq = seq
	if !isSGR(seq) {
		defer s.forgetPrinted()
		if s.seq = seq.WithoutSubParams(s.topParams[:0]); s.seq != seq {
			s.topParams = s.seq.Params
		}
	}
	if seq.Malformed {
		s.recordUnhandled()
		return
	}
	s.csiDispatch(seq.Final)
}

func (h *vtHandler) ESC(seq *vtparse.Seq) {
	s := (*Screen)(h)
	s.seq = seq
	defer s.forgetPrinted()
	s.escDispatch(seq.Final)
}

func (h *vtHandler) OSC(seq *vtparse.Seq) {
	s := (*Screen)(h)
	s.seq = seq
	defer s.forgetPrinted()
	s.oscDispatch()
}

// String: DCS, SOS, PM and APC strings are consumed; only the DCS
// queries are acted on (dcs.go).
func (h *vtHandler) String(seq *vtparse.Seq) {
	s := (*Screen)(h)
	s.seq = seq
	defer s.forgetPrinted()
	if seq.Final == 'P' {
		s.dcsDispatch(seq)
		return
	}
	s.recordUnhandled()
}

// isSGR tells a well-formed plain SGR (CSI ... m, no private marker or
// intermediates: CSI > 4 ; 1 m and its kin are other controls).
func isSGR(seq *vtparse.Seq) bool {
	return seq.Final == 'm' && seq.Private == 0 && len(seq.Inter) == 0 && !seq.Malformed
}

// forgetPrinted runs after each sequence, REP included (a second REP in a
// row repeats nothing either).
func (s *Screen) forgetPrinted() { s.lastPrinted = 0 }
