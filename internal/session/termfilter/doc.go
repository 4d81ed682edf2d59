// Package termfilter passes a program's terminal output on to a real
// terminal (the user's, under `ptyplex attach`) with only what that
// terminal needs to draw the screen: text, the C0 controls that move the
// cursor, and the escape sequences that draw, move, erase, scroll and set
// the modes that change what keys send. Everything that would make the
// user's terminal act beyond its screen is dropped: clipboard writes
// (OSC 52), titles (OSC 0, 1, 2), colour palette changes, notifications,
// every DCS, SOS, PM and APC string, and each request that makes a
// terminal type an answer back (device attributes, status and cursor
// reports, mode reports, window and title reports, colour queries). The
// session's own emulator answers the queries a program relies on, so the
// program still gets one answer, from the session, and never a second one
// from whoever is attached.
//
// The filter is one pass over the stream on screen/vtparse: sequences
// split across writes are kept in the parser until they complete, and a
// string that never ends costs at most the parser's caps (MaxOSC, MaxRaw)
// before it is dropped. What passes goes out byte for byte as it arrived
// (vtparse's Seq.Raw); a DEC mode sequence that mixes kept and dropped
// modes is re-encoded with the kept ones only.
//
// # What passes
//
//   - Text: printable ASCII and UTF-8 characters as the parser decoded
//     them (a malformed byte becomes U+FFFD, as the session shows it).
//     C1 code points (U+0080..U+009F) are dropped: a UTF-8 terminal may
//     act on them as the 8-bit forms of ESC [, ESC ] and ESC P.
//   - C0: BEL, BS, HT, LF, VT, FF, CR, SO, SI. The rest are dropped: ENQ
//     makes some terminals type their answerback message.
//   - ESC: DECSC/DECRC (7, 8), IND, NEL, HTS, RI (D, E, H, M), SS2/SS3,
//     the keypad modes (=, >), RIS (c), the locking shifts (n, o, |, },
//     ~), character set designations (ESC ( B and the like) and the line
//     size and alignment sequences (ESC # 3..6, 8).
//   - CSI: cursor moves (A..G, H, f, `, a, d, e, I, Z), erase and edit
//     (J, K, X, @, P, L, M, b, S, T, the DEC selective erases), SGR (m),
//     the scroll region and margins (r, s), cursor save/restore (s, u),
//     tab clears (g), ANSI modes (h, l), the cursor style (SP q), the soft
//     reset (! p) and the title stack (22 t, 23 t).
//   - DEC private modes (CSI ? ... h / l, and XTSAVE/XTRESTORE CSI ? ... s
//     / r) for the cursor keys (1), reverse video (5), origin (6), wrap
//     (7), cursor visibility (25), the alternate screen (47, 1047, 1048,
//     1049), left/right margins (69), mouse reporting (9, 1000, 1002,
//     1003, 1005, 1006, 1015, 1016), focus events (1004), bracketed paste
//     (2004) and synchronized output (2026): modes the session's emulator
//     follows or that only say how keys, clicks and focus are reported.
//     `ptyplex attach` turns each of them back off when it detaches.
//   - CSI h / l for insert (4) and newline (20) mode only: keyboard lock
//     (2) and local echo (12) would take the user's terminal over.
//   - OSC 8 (hyperlinks) and OSC 133 (prompt marks).
//   - An OSC passes only if its body is valid UTF-8 without control
//     characters: a C1 control inside a hyperlink's URI (U+009D, or the
//     raw byte) starts another sequence in a terminal that reads 8-bit
//     controls.
//   - With Options.AllowTitle, OSC 0, 1 and 2; with
//     Options.AllowClipboard, OSC 52 clipboard writes. A clipboard read
//     (OSC 52 with "?" as its data) is dropped either way: the terminal
//     would type the clipboard into the session.
//
// Everything else is dropped, including any sequence the parser marked
// malformed or truncated.
package termfilter
