package vtparse

import "slices"

// Handler receives what the parser recognises, in stream order. The
// parser reuses the Seq it passes (and the slices in it) for the next
// sequence: a handler that keeps anything copies it.
type Handler interface {
	// Print receives a run of printable ASCII (0x20-0x7e), as many bytes
	// as arrived together outside any sequence.
	Print(text []byte)
	// PrintRune receives one character that is not plain ASCII: a
	// decoded UTF-8 character, or utf8.RuneError for a malformed one.
	PrintRune(r rune)
	// Execute receives a C0 control (other than ESC, CAN and SUB). It is
	// also called for controls that arrive in the middle of a sequence,
	// which terminals act on at once; the sequence then carries on.
	Execute(c byte)
	// CSI receives a control sequence (ESC [ ... final).
	CSI(s *Seq)
	// ESC receives an escape sequence other than CSI and the strings
	// (ESC 7, ESC ( 0, ESC # 8, ...).
	ESC(s *Seq)
	// OSC receives an operating system command, whole.
	OSC(s *Seq)
	// String receives a DCS, SOS, PM or APC string, whole; Seq.Final is
	// its introducer ('P', 'X', '^' or '_').
	String(s *Seq)
}

// C1Handler is an optional interface of a Handler. A byte 0x80-0x9f that
// arrives outside any sequence and belongs to no UTF-8 character is an
// 8-bit C1 control to a terminal not in UTF-8 mode; in UTF-8 it is a stray
// byte, which alacritty and xterm.js both ignore. A handler that
// implements C1Handler receives such a byte through ExecuteC1; any other
// receives utf8.RuneError through PrintRune, as for other malformed bytes.
type C1Handler interface {
	ExecuteC1(c byte)
}

// Seq is one complete sequence as the parser saw it.
type Seq struct {
	// Final is the final byte of a CSI or ESC sequence, ']' for an OSC,
	// and the introducer of a DCS ('P'), SOS ('X'), PM ('^') or APC ('_').
	Final byte
	// Private is a CSI's private marker ('?', '>', '<' or '='), 0 if none.
	Private byte
	// Inter holds the intermediate bytes (0x20-0x2f), at most MaxInter.
	Inter []byte
	// Params holds a CSI's numeric parameters, each clamped to MaxParam;
	// an empty parameter is 0. Sub[i] says Params[i] was introduced by
	// ':' (a sub-parameter of the one before), as in SGR 38:2:r:g:b.
	Params []int
	Sub    []bool
	// Malformed marks a sequence that broke the grammar (a digit after an
	// intermediate, a second private marker, too many parameters or
	// intermediates). It is still delivered, so that a handler can
	// record or drop it, but it should not be acted on.
	Malformed bool
	// Data is an OSC's payload, between ESC ] and the terminator, capped
	// at the parser's MaxOSC.
	Data []byte
	// BEL says the OSC ended with BEL rather than ST; replies to it use
	// the same terminator.
	BEL bool
	// Raw is the sequence's bytes exactly as received, from ESC to the
	// final byte or terminator, less any C0 controls that arrived in the
	// middle of it (those went to Execute first). It is capped at the
	// parser's MaxRaw; Truncated says bytes were left out.
	Raw       []byte
	Truncated bool
}

// WithoutSubParams returns s, or, when s has sub-parameters (values
// after ':'), a copy with each ';'-separated field reduced to its first
// value, the parameters in dst. Only SGR gives sub-parameters a meaning
// (38:2::r:g:b, 4:3); any other sequence reads the field's first value,
// as vte (alacritty) and xterm.js do: CSI 2:3 H is CSI 2 H, CSI ? 1:2 h
// sets mode 1 only.
func (s *Seq) WithoutSubParams(dst []int) *Seq {
	if !slices.Contains(s.Sub, true) {
		return s
	}
	t := *s
	t.Params = dst[:0]
	for i, v := range s.Params {
		if !s.Sub[i] {
			t.Params = append(t.Params, v)
		}
	}
	t.Sub = make([]bool, len(t.Params))
	return &t
}

// Param returns parameter i, or def when it is absent or zero. Zero and
// absent mean the same thing for every sequence that has a default.
func (s *Seq) Param(i, def int) int {
	if i >= len(s.Params) || s.Params[i] == 0 {
		return def
	}
	return s.Params[i]
}
