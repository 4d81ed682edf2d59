package vtparse

// The state machine is the DEC VT500-series parser as Paul Williams drew
// it (vt100.net/emu/dec_ansi_parser), as a table: for each state and byte,
// one action and the next state. Ground is left out of the table because
// printable text and UTF-8 take their own fast paths, and the two states
// that follow an ESC inside a string are left out because they need to
// look at one byte before deciding whether the string ended.

type state uint8

const (
	stGround state = iota
	stEscape
	stEscInter
	stCSIEntry
	stCSIParam
	stCSIInter
	stCSIIgnore // a malformed CSI: consumed to its final byte
	stOSC
	stOSCEsc // ESC inside an OSC: ST, or the start of a new sequence
	stString // DCS, SOS, PM, APC
	stStringEsc
	numStates
)

type action uint8

const (
	acIgnore      action = iota // drop the byte, keep the state
	acExecute                   // C0 control: act on it, keep the state
	acAbort                     // CAN, SUB: drop the sequence
	acEscape                    // ESC: a new sequence starts
	acCollect                   // intermediate byte
	acParam                     // digit, ';' or ':'
	acPrivate                   // private marker
	acMalformed                 // a byte the grammar does not allow here
	acKeep                      // part of the sequence, nothing to decode
	acEscDispatch               // final byte of an ESC sequence
	acCSIDispatch               // final byte of a CSI
	acOSCStart                  // ESC ]
	acOSCPut                    // a byte of an OSC string
	acOSCEnd                    // BEL ends an OSC
	acStringStart               // ESC P, ESC X, ESC ^, ESC _
)

// transition packs an action (high nibble) and a next state (low nibble).
type transition uint8

func tr(a action, s state) transition { return transition(a)<<4 | transition(s) }

func (t transition) action() action { return action(t >> 4) }
func (t transition) next() state    { return state(t & 0x0f) }

var table = buildTable()

func buildTable() (t [numStates][256]transition) {
	set := func(s state, lo, hi int, a action, next state) {
		for b := lo; b <= hi; b++ {
			t[s][b] = tr(a, next)
		}
	}
	// Bytes with no rule are ignored in place (DEL, and 8-bit bytes
	// inside an ESC or CSI sequence).
	for s := range numStates {
		set(s, 0x00, 0xff, acIgnore, s)
	}
	// Controls act at once in every sequence state but the strings, CAN
	// and SUB cancel, ESC starts over.
	for _, s := range []state{stEscape, stEscInter, stCSIEntry, stCSIParam, stCSIInter, stCSIIgnore} {
		set(s, 0x00, 0x1f, acExecute, s)
		set(s, 0x18, 0x18, acAbort, stGround)
		set(s, 0x1a, 0x1a, acAbort, stGround)
		set(s, 0x1b, 0x1b, acEscape, stEscape)
	}

	set(stEscape, 0x20, 0x2f, acCollect, stEscInter)
	set(stEscape, 0x30, 0x7e, acEscDispatch, stGround)
	set(stEscape, '[', '[', acKeep, stCSIEntry)
	set(stEscape, ']', ']', acOSCStart, stOSC)
	for _, b := range []int{'P', 'X', '^', '_'} {
		set(stEscape, b, b, acStringStart, stString)
	}

	set(stEscInter, 0x20, 0x2f, acCollect, stEscInter)
	set(stEscInter, 0x30, 0x7e, acEscDispatch, stGround)

	set(stCSIEntry, 0x20, 0x2f, acCollect, stCSIInter)
	set(stCSIEntry, 0x30, 0x3b, acParam, stCSIParam)
	set(stCSIEntry, 0x3c, 0x3f, acPrivate, stCSIParam)
	set(stCSIEntry, 0x40, 0x7e, acCSIDispatch, stGround)

	set(stCSIParam, 0x20, 0x2f, acCollect, stCSIInter)
	set(stCSIParam, 0x30, 0x3b, acParam, stCSIParam)
	set(stCSIParam, 0x3c, 0x3f, acMalformed, stCSIIgnore)
	set(stCSIParam, 0x40, 0x7e, acCSIDispatch, stGround)

	set(stCSIInter, 0x20, 0x2f, acCollect, stCSIInter)
	set(stCSIInter, 0x30, 0x3f, acMalformed, stCSIIgnore)
	set(stCSIInter, 0x40, 0x7e, acCSIDispatch, stGround)

	set(stCSIIgnore, 0x20, 0x3f, acKeep, stCSIIgnore)
	set(stCSIIgnore, 0x40, 0x7e, acCSIDispatch, stGround)

	// Inside an OSC other controls are dropped; 8-bit bytes are text
	// (UTF-8 titles).
	set(stOSC, 0x20, 0xff, acOSCPut, stOSC)
	set(stOSC, 0x07, 0x07, acOSCEnd, stGround)
	set(stOSC, 0x18, 0x18, acAbort, stGround)
	set(stOSC, 0x1a, 0x1a, acAbort, stGround)
	set(stOSC, 0x1b, 0x1b, acIgnore, stOSCEsc)

	// A DCS, SOS, PM or APC keeps every byte until ST.
	set(stString, 0x00, 0xff, acKeep, stString)
	set(stString, 0x18, 0x18, acAbort, stGround)
	set(stString, 0x1a, 0x1a, acAbort, stGround)
	set(stString, 0x1b, 0x1b, acIgnore, stStringEsc)
	return t
}
