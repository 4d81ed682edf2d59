//go:build unix

package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// ATTACH (a ptyplex addition) turns a connection into a terminal of the
// session: after the answer line the daemon sends a repaint of the screen
// and then every byte the program writes, and the client's bytes go to the
// program as typed input (unless "read_only"). The connection carries
// raw bytes both ways from then on, and never goes through the request
// queue, so attachers hold back nobody and agent requests keep working.

// attachBacklog bounds the output queued for one attacher. An attacher
// that falls this far behind (a stopped terminal, a slow link) gets its
// queue dropped and a fresh repaint instead: the PTY reader never waits
// for an attacher.
const attachBacklog = 1 << 20

// attachWriteTimeout bounds one write to an attacher; one that does not
// take its bytes for that long is dropped.
const attachWriteTimeout = 10 * time.Second

// attacher is one attached client.
type attacher struct {
	conn     *clientConn
	readOnly bool
	mu       sync.Mutex
	pending  []byte
	resync   bool          // pending was dropped: repaint before more output
	wake     chan struct{} // capacity 1
	gone     chan struct{} // closed when the client side ends (read error or EOF)
}

// queue adds PTY output for a; st.mu is held (feed).
func (a *attacher) queue(p []byte) {
	a.mu.Lock()
	if a.resync || len(a.pending)+len(p) > attachBacklog {
		a.pending, a.resync = nil, true
	} else {
		a.pending = append(a.pending, p...)
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// isAttach tells an ATTACH request line from the others without a full
// parse for every request.
func isAttach(line []byte) bool {
	if !bytes.Contains(line, []byte("ATTACH")) {
		return false
	}
	_, typ, err := wire.ParseRequest(line)
	return err == nil && typ == "ATTACH"
}

// serveAttach runs one attached connection until the client leaves, the
// program's output ends, or the daemon stops. The client sends nothing
// after the request line until it has read the answer (bytes that came in
// the same read as the request line are not kept).
func (d *Daemon) serveAttach(c *clientConn, line []byte) {
	// Not joined by Serve: an attacher ends by itself once d.done is
	// closed, and a daemon that exits closes its connections anyway.
	defer c.Close()
	f, _, _ := wire.ParseRequest(line)
	ro, err := f.Bool("read_only")
	if err != nil {
		respond(c, nil, err)
		return
	}
	select {
	case <-d.done:
		respond(c, nil, wire.RequestError("Daemon is shutting down"))
		return
	default:
	}
	a := &attacher{conn: c, readOnly: ro, wake: make(chan struct{}, 1), gone: make(chan struct{})}
	st := d.st
	st.mu.Lock()
	cols, rows := st.scr.Size()
	head := encodeResponse(wire.AttachData{Size: wire.Size{Rows: rows, Cols: cols}}, nil)
	a.pending = append(head, repaint(st)...)
	if st.attachers == nil {
		st.attachers = map[*attacher]struct{}{}
	}
	st.attachers[a] = struct{}{}
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.attachers, a)
		st.mu.Unlock()
	}()
	c.shrink()             // the request buffer is not needed any more
	go d.attachInput(a, c) // ends when the client's side ends or we close c
	d.attachOutput(a)
}

// attachOutput writes queued output to the attacher until it leaves, the
// PTY reached end of file (the program is gone) or the daemon stops.
func (d *Daemon) attachOutput(a *attacher) {
	select {
	case a.wake <- struct{}{}: // the answer and repaint are queued already
	default:
	}
	for {
		select {
		case <-a.wake:
		case <-a.gone:
			return
		case <-d.done:
			return
		case <-d.readerDone:
			// Everything the program wrote has been queued; send the rest.
			d.flushAttacher(a)
			return
		}
		if !d.flushAttacher(a) {
			return
		}
	}
}

// flushAttacher sends what is queued (or a repaint after an overflow); it
// reports false when the connection failed.
func (d *Daemon) flushAttacher(a *attacher) bool {
	a.mu.Lock()
	b, resync := a.pending, a.resync
	a.pending, a.resync = nil, false
	a.mu.Unlock()
	if resync {
		d.st.mu.Lock()
		b = repaint(d.st)
		a.mu.Lock()
		a.pending = nil // already in the repaint
		a.mu.Unlock()
		d.st.mu.Unlock()
	}
	if len(b) == 0 {
		return true
	}
	a.conn.SetWriteDeadline(time.Now().Add(attachWriteTimeout))
	_, err := a.conn.Write(b)
	return err == nil
}

// attachInput copies the client's bytes to the program (or discards them
// when read-only) and closes a.gone when the client's side ends.
func (d *Daemon) attachInput(a *attacher, br io.Reader) {
	defer close(a.gone)
	buf := make([]byte, 4096)
	for {
		n, err := br.Read(buf)
		if n > 0 && !a.readOnly {
			d.st.mu.Lock()
			exited := d.st.exited
			d.st.mu.Unlock()
			if !exited {
				if _, werr := d.writePTY(buf[:n], inputTimeout); werr != nil && !errors.Is(werr, os.ErrDeadlineExceeded) {
					return
				}
			}
		}
		if err != nil {
			return // io.EOF: the client detached; else the connection failed
		}
	}
}

// repaint renders the screen so that a terminal of the session's size
// shows what the emulator holds: the modes that change what keys send or
// how the screen is used, every line with its colours, then the cursor
// (with its pending wrap: a line filled to its last column goes on on the
// next line), the scroll region and the left and right margins, the
// other modes the output filter lets through (origin, insert, newline,
// reverse video, focus events, the mouse's tracking and encodings, the
// cursor style), the pen the program's next text is written with, and
// the character sets: what detach resets.
// st.mu must be held.
func repaint(st *state) []byte {
	scr := st.scr
	var b bytes.Buffer
	b.WriteString("\x1b[0m")
	if scr.AltScreen() {
		b.WriteString("\x1b[?1049h")
	}
	b.WriteString("\x1b[H\x1b[2J")
	_, rows := scr.Size()
	for r := 1; r <= rows; r++ {
		fmt.Fprintf(&b, "\x1b[%d;1H", r)
		b.WriteString(scr.Line(r, true))
	}
	b.WriteString("\x1b[0m")
	// The scroll region, before the modes: DECSTBM homes the cursor, in
	// origin mode to the region's top.
	top, bottom := scr.ScrollRegion()
	if top != 0 || bottom != rows-1 {
		fmt.Fprintf(&b, "\x1b[%d;%dr", top+1, bottom+1)
	}
	// The left and right margins, which only DECLRMM lets a program set
	// (DECSLRM homes the cursor as DECSTBM does).
	left, right := scr.Margins()
	if scr.PrivateMode(69) {
		b.WriteString("\x1b[?69h")
		if cols, _ := scr.Size(); left != 0 || right != cols-1 {
			fmt.Fprintf(&b, "\x1b[%d;%ds", left+1, right+1)
		}
	}
	modes := []struct {
		on  bool
		seq string
	}{
		{scr.AppCursorKeys(), "\x1b[?1h"},
		{scr.AppKeypad(), "\x1b="},
		{scr.BracketedPaste(), "\x1b[?2004h"},
		{!scr.AutoWrap(), "\x1b[?7l"},
		{scr.PrivateMode(6), "\x1b[?6h"},
		{scr.InsertMode(), "\x1b[4h"},
		{scr.NewlineMode(), "\x1b[20h"},
		{scr.PrivateMode(5), "\x1b[?5h"},
		{scr.PrivateMode(9), "\x1b[?9h"},
		{scr.PrivateMode(1000), "\x1b[?1000h"},
		{scr.PrivateMode(1002), "\x1b[?1002h"},
		{scr.PrivateMode(1003), "\x1b[?1003h"},
		{scr.PrivateMode(1004), "\x1b[?1004h"},
		{scr.PrivateMode(1005), "\x1b[?1005h"},
		{scr.PrivateMode(1006), "\x1b[?1006h"},
		{scr.PrivateMode(1015), "\x1b[?1015h"},
		{scr.PrivateMode(1016), "\x1b[?1016h"},
	}
	for _, m := range modes {
		if m.on {
			b.WriteString(m.seq)
		}
	}
	if style := scr.CursorStyle(); style != 0 {
		fmt.Fprintf(&b, "\x1b[%d q", style)
	}
	row, col := scr.Cursor()
	var cell []byte
	if scr.PendingWrap() && scr.AutoWrap() {
		// Only writing the last cell again leaves the wrap pending: a
		// CUP alone clears it.
		cell, col = scr.AppendCursorCell(nil)
	}
	if scr.PrivateMode(6) {
		// CUP counts from the region's top and the left margin in
		// origin mode.
		row -= top
		col -= left
	}
	b.WriteString("\x1b[" + strconv.Itoa(row+1) + ";" + strconv.Itoa(col+1) + "H")
	b.Write(cell)
	b.Write(scr.AppendPen(nil))
	// After the cell, which holds the character its character set
	// already mapped.
	b.Write(scr.AppendCharsets(nil))
	if scr.CursorVisible() {
		b.WriteString("\x1b[?25h")
	} else {
		b.WriteString("\x1b[?25l")
	}
	return b.Bytes()
}
