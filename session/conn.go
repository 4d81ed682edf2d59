package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// responseTimeout bounds how long a client that does not read its answer
// can hold up the request handler.
const responseTimeout = 10 * time.Second

// readRequest reads one newline-terminated request (at most MaxMessage
// bytes, never buffering more) and queues it. A request that ends at EOF
// without a newline is still taken; one that is cut off, oversized or
// unreadable is queued with readErr set, so the client gets an answer in
// turn. Once the request is read, the connection is watched for hang-up.
func (d *Daemon) readRequest(c *net.UnixConn) {
	br := bufio.NewReaderSize(c, 64<<10)
	var line []byte
	var readErr error
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxMessage+1 { // +1: the newline itself
			readErr = requestError(fmt.Sprintf("Invalid request: message exceeds the maximum size of %d bytes (10 MB)", MaxMessage))
			break
		}
		line = append(line, chunk...)
		if err == nil {
			line = line[:len(line)-1]
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 {
			break // a final request without its newline
		}
		if errors.Is(err, io.EOF) {
			readErr = invalidf("connection closed before a complete request was received")
		} else {
			readErr = invalidf("reading request: %v", err)
		}
		break
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if readErr == nil && isAttach(line) {
		d.idle.touch()
		d.serveAttach(c, br, line) // a raw stream from now on (attach.go)
		return
	}
	gone := make(chan struct{})
	r := &request{conn: c, line: line, readErr: readErr, gone: gone}
	d.idle.touch()
	if !d.queue.push(r) {
		respond(c, nil, requestError("Daemon is shutting down"))
		return
	}
	watchHangup(c, gone)
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
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
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
func refuse(c *net.UnixConn) {
	c.SetDeadline(time.Now().Add(responseTimeout))
	out, _ := marshal(Response{Status: "error", Error: "Permission denied: the session belongs to another user"})
	c.Write(append(out, '\n'))
	c.CloseWrite()
	io.Copy(io.Discard, io.LimitReader(c, MaxMessage+1))
	c.Close()
}

// respond writes one response line and closes the connection. A client
// that left early just loses its answer.
func respond(c *net.UnixConn, data any, rerr error) {
	c.SetWriteDeadline(time.Now().Add(responseTimeout))
	c.Write(encodeResponse(data, rerr))
	c.Close()
}

// encodeResponse renders the answer line. An ok answer with data is
// assembled around the once-encoded data: putting it in Response.Data
// would make encoding/json re-scan (compact) a multi-megabyte screen.
func encodeResponse(data any, rerr error) []byte {
	if rerr == nil && data == nil {
		return []byte(`{"status":"ok"}` + "\n")
	}
	if rerr == nil {
		raw, err := marshal(data)
		if err == nil {
			out := make([]byte, 0, len(raw)+32)
			out = append(out, `{"status":"ok","data":`...)
			out = append(out, raw...)
			return append(out, "}\n"...)
		}
		rerr = requestError("Failed to encode response: " + err.Error())
	}
	out, err := marshal(Response{Status: "error", Error: rerr.Error()})
	if err != nil { // cannot happen for a string; answer something valid anyway
		out = []byte(`{"status":"error","error":"Failed to encode response"}`)
	}
	return append(out, '\n')
}

// marshal encodes v without HTML escaping, which only makes screen text
// harder to read for no gain on a Unix socket.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
