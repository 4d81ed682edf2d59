// Package vtparse splits a terminal's output stream into printable text,
// C0 controls and escape sequences (ESC, CSI, OSC, and the DCS, SOS, PM
// and APC strings), and hands each to a Handler. It knows the grammar of
// the stream, not what any sequence means: the screen emulator is one
// handler, a filter that passes a stream on is another.
//
// The state machine is the DEC VT500-series parser as a table of
// (state, byte) → (action, next state). Runs of printable ASCII bypass the
// table and reach Handler.Print as one slice; a CSI's digits are taken in
// bulk. UTF-8 is decoded in the ground state only; bytes of a sequence
// split across Parse calls are kept, so chunk boundaries never change
// what the handler sees.
//
// # Filtering a stream
//
// Every sequence arrives with its raw bytes (Seq.Raw), so a filter
// re-emits what it keeps and drops the rest:
//
//   - Print: write the text as is; PrintRune: write utf8.AppendRune of
//     the rune (malformed UTF-8 arrives as utf8.RuneError and goes out as
//     U+FFFD, which is what a terminal would have shown). A stray byte
//     0x80-0x9f arrives that way too, unless the handler implements
//     C1Handler: terminals show nothing for it, and ExecuteC1 can drop it.
//   - Execute: write the byte (controls inside a sequence arrive here
//     before the sequence they interrupted, and are not part of its Raw).
//   - CSI, ESC, OSC, String: write s.Raw, or drop it. An OSC's number is
//     the leading digits of s.Data (52 is the clipboard, 0, 1 and 2 set
//     titles); a CSI is told by s.Final, s.Private, s.Inter and s.Params
//     (CSI 21 t asks for the title back; CSI 6 n, CSI c and the other
//     queries make the terminal type a reply). String covers DCS (s.Final
//     'P'), SOS, PM and APC.
//   - Set Parser.MaxRaw above the longest sequence to be passed on and
//     drop any with Truncated set: its Raw lacks bytes.
//   - A sequence that is cut off (by CAN, SUB, or ESC starting another)
//     is never delivered, so it is dropped, as a terminal would.
//
// A Parser is not safe for concurrent use; the Seq passed to a handler is
// reused for the next sequence.
package vtparse
