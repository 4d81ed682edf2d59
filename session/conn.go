//go:build unix

package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// responseTimeout bounds how long the daemon keeps writing an answer its
// client does not read (and how long such a client can hold up whoever
// answers it: a WAIT's goroutine, or STOP's exit; not the request handler,
// see answer).
const responseTimeout = 10 * time.Second

// readRequest reads one request line (see readLine) and queues it in its
// turn (see arrivals). A request that ends at EOF without a newline is
// still taken; one that is cut off, oversized or unreadable is queued with
// readErr set, so the client gets an answer in turn. A connection the
// daemon has no room for, or one that does not complete its line in time,
// is answered at once. Once the request is read, the connection is
// watched for hang-up.
func (d *Daemon) readRequest(c *clientConn, turn *arrival) {
	defer d.arrivals.settle(turn) // for the returns that queue nothing
	c.SetReadDeadline(time.Now().Add(RequestReadTimeout))
	var line []byte
	readErr := awaitFirstBytes(c)
	if readErr == nil {
		line, readErr = readLine(c)
	}
	var busy *busyError
	switch {
	case errors.As(readErr, &busy):
		respond(c, nil, busy.err)
		return
	case errors.Is(readErr, os.ErrDeadlineExceeded):
		respond(c, nil, wire.Invalidf("no complete request line within %v", RequestReadTimeout))
		return
	case readErr != nil:
		c.shrink() // the partial line is dropped; only the error is queued
	}
	c.SetReadDeadline(time.Time{})
	if readErr == nil && isAttach(line) {
		d.arrivals.settle(turn)
		d.idle.touch()
		d.serveAttach(c, line) // a raw stream from now on (attach.go)
		return
	}
	gone := make(chan struct{})
	r := &request{conn: c, line: line, readErr: readErr, gone: gone}
	d.idle.touch()
	d.arrivals.awaitEarlier(turn)
	ok := d.queue.push(r)
	d.arrivals.settle(turn)
	if !ok {
		respond(c, nil, wire.RequestError("Daemon is shutting down"))
		return
	}
	watchHangup(c.UnixConn, gone)
}

// busyError is a read that stopped because of the daemon's byte budget.
type busyError struct{ err error }

func (e *busyError) Error() string { return e.err.Error() }

// readLine reads up to the first newline. The request is the bytes before
// it, without a '\r' that precedes it; at end of file the bytes read so far
// are the request when they are not blank. It may be wire.MaxMessage bytes
// long, whichever way it ends; the buffer never grows beyond that plus
// "\r\n", and every byte of it beyond the first few KiB is reserved in the
// daemon's MaxPendingBytes budget first.
func readLine(c *clientConn) ([]byte, error) {
	buf := make([]byte, 0, firstBuffer)
	for {
		if len(buf) == cap(buf) {
			n := min(2*cap(buf), wire.MaxMessage+2)
			if !c.grow(int64(n - cap(buf))) {
				return nil, &busyError{errBusy(fmt.Sprintf("requests being read or waiting to run hold %d MB, the limit", MaxPendingBytes>>20))}
			}
			buf = append(make([]byte, 0, n), buf...)
		}
		k, err := c.Read(buf[len(buf):cap(buf)])
		if k > 0 {
			from := len(buf)
			buf = buf[:from+k]
			if i := bytes.IndexByte(buf[from:], '\n'); i >= 0 {
				return checkSize(buf[:from+i])
			}
			if len(buf) > wire.MaxMessage+1 { // room for a final '\r' at most
				return nil, errTooLarge
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return checkSize(buf) // a final request without its newline
		case errors.Is(err, io.EOF):
			return nil, wire.Invalidf("connection closed before a complete request was received")
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, err
		default:
			return nil, wire.Invalidf("reading request: %v", err)
		}
	}
}

var errTooLarge = wire.RequestError(fmt.Sprintf("Invalid request: message exceeds the maximum size of %d bytes (10 MB)", wire.MaxMessage))

// checkSize applies the limit to the request proper, without its line end.
func checkSize(line []byte) ([]byte, error) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > wire.MaxMessage {
		return nil, errTooLarge
	}
	return line, nil
}

// watchHangup closes gone when the peer has closed its end of the
// connection, and returns when it did or when we closed the connection.
// A peer that only shut down its sending side (shutdown(SHUT_WR), as
// `nc -N` does) is still waiting for the answer and does not count: only
// POLLHUP, which a Unix socket reports once both directions are shut, or
// an error ends the wait. Bytes sent after the request are discarded.
func watchHangup(c *net.UnixConn, gone chan struct{}) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	var buf [512]byte
	rc.Read(func(fd uintptr) bool {
		for {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: hangupPollEvents}}
			if _, err := unix.Poll(pfd, 0); err == nil && pfd[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
				close(gone)
				return true
			}
			n, err := unix.Read(int(fd), buf[:])
			switch {
			case n > 0 || err == unix.EINTR:
				continue
			case err == unix.EAGAIN || (n == 0 && err == nil):
				return false // park until the poller reports the next event
			default:
				close(gone)
				return true
			}
		}
	})
}

// refuse answers a connection from another user without looking at its
// request. The request is drained (up to the size limit, briefly) before
// closing, so the refusal reaches the client instead of a reset.
func refuse(c *clientConn) {
	c.SetDeadline(time.Now().Add(responseTimeout))
	out, _ := wire.Marshal(wire.Response{Status: "error", Error: "Permission denied: the session belongs to another user"})
	c.Write(append(out, '\n'))
	c.CloseWrite()
	io.Copy(io.Discard, io.LimitReader(c, wire.MaxMessage+1))
	c.Close()
}

// respond writes one response line and closes the connection. A client
// that left early just loses its answer. Most answers fit in the socket
// at once; only the rest of a large one needs the write deadline (whose
// timer would otherwise interrupt the runtime's poller on every answer).
func respond(c *clientConn, data any, rerr error) {
	out := encodeResponse(data, rerr)
	if n, err := writeNow(c, out); err == nil && n < len(out) {
		c.SetWriteDeadline(time.Now().Add(responseTimeout))
		c.Write(out[n:])
	}
	c.Close()
}

// answer is respond for the request handler: the answer is encoded now,
// in the request's turn, but what the socket does not take at once (a
// long OUTPUT whose client reads slowly, or not at all) is written by a
// goroutine of its own, so that such a client holds up no later request
// for the responseTimeout. Serve waits for those writes before it
// returns.
func (d *Daemon) answer(c *clientConn, data any, rerr error) {
	out := encodeResponse(data, rerr)
	n, err := writeNow(c, out)
	if err != nil || n == len(out) {
		c.Close()
		return
	}
	d.writes.Add(1)
	go func() {
		defer d.writes.Done()
		c.SetWriteDeadline(time.Now().Add(responseTimeout))
		c.Write(out[n:])
		c.Close()
	}()
}

// encodeResponse renders the answer line. An ok answer with data is
// assembled around the once-encoded data: putting it in wire.Response.Data
// would make encoding/json re-scan (compact) a multi-megabyte screen.
func encodeResponse(data any, rerr error) []byte {
	if rerr == nil && data == nil {
		return []byte(`{"status":"ok"}` + "\n")
	}
	if rerr == nil {
		raw, err := wire.Marshal(data)
		if err == nil {
			out := make([]byte, 0, len(raw)+32)
			out = append(out, `{"status":"ok","data":`...)
			out = append(out, raw...)
			return append(out, "}\n"...)
		}
		rerr = wire.RequestError("Failed to encode response: " + err.Error())
	}
	resp := wire.Response{Status: "error", Error: rerr.Error()}
	var coded wire.CodedError
	if errors.As(rerr, &coded) {
		resp.Code = string(coded.Code)
	}
	out, err := wire.Marshal(resp)
	if err != nil { // cannot happen for a string; answer something valid anyway
		out = []byte(`{"status":"error","error":"Failed to encode response"}`)
	}
	return append(out, '\n')
}
