// Package screen is the terminal emulator behind the session daemon: it
// turns the byte stream a program writes to its PTY into a grid of cells
// that can be read back as plain or ANSI text. It knows nothing about
// processes or sockets; the caller feeds Write and writes TakeReplies
// back to the PTY.
//
// # Model
//
// A Screen holds two buffers of rows x cols cells, the main screen and the
// alternate screen, and shows one of them. A cell is a rune plus a packed
// pen (foreground, background, style flags); colours remember the form the
// program used (16-colour, 256-palette or truecolour) so ANSI rendering
// reproduces it. A wide character takes two cells (a lead and a trail). A
// cell holds a whole grapheme cluster (UAX #29, segmented by
// github.com/rivo/uniseg): combining marks, variation selectors, ZWJ
// sequences and regional-indicator pairs join the cell before the cursor.
// Widths are glibc's wcwidth summed over the cluster, except that code
// points after a ZWJ add nothing, as tmux 3.3a shows them: a ZWJ emoji
// sequence is narrower here than the glibc sum (and than in xterm.js and
// alacritty), so a program placing the cursor by that sum disagrees with
// the screen there (see README.md, "Width policy").
//
// The cursor has a pending-wrap state: writing into the last column leaves
// the cursor there, and only the next printable character wraps (the VT100
// "delayed wrap"). With autowrap off the state is kept but not taken (the
// next characters go over the last column) until ?7h, as alacritty. Lines that scroll off the top of the main screen, when
// the scroll region starts at the first line, enter a scrollback ring of
// fixed capacity. Rows remember whether they were left by an autowrap, so
// a width change reflows the main screen and the scrollback (Resize).
//
// Parsing is done by package vtparse, a table-driven state machine with
// all its state in the Screen's Parser, so sequences and UTF-8 may be
// split anywhere across Write calls; Screen is its handler. Runs of
// printable ASCII reach the screen as one slice and are copied into cells
// directly.
//
// # Replies and unhandled sequences
//
// Queries (DSR, CPR, DA1, DA2, DECRQM, DECRQSS, XTGETTCAP, OSC 4/10/11/12,
// and XTVERSION given Options.Version) produce replies that accumulate in
// memory until TakeReplies: Write never blocks, unlike emulators that write
// replies into a pipe. Sequences the screen does not act on are kept, as
// readable text and hex, in a small ring (Unhandled) for debugging; those
// it deliberately ignores (mouse modes, underline colour, icon names) are
// not.
//
// A wide character that does not fit in the last column wraps whole to
// the next line; with autowrap (DECAWM) off it is not drawn and the cursor
// stays. Overwriting either half of a wide character blanks the other.
//
// # Rendering choices
//
// Plain text shows hidden (SGR 8) text as written, like tmux capture-pane.
// ANSI text resets with ESC[0m (never the short ESC[m).
//
// Renderers that draw rather than print (package shot, the PNG
// screenshots) read cells through Cells: the character, its width, the
// colours resolved to RGB through the palette the program may have
// changed (OSC 4, 10, 11), and the attributes as written.
package screen
