//go:build unix

package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
)

// Call sends one request to the daemon at socket and returns its answer.
// An error response is returned as a Response with Status "error", not as
// an error; errors are for failing to talk to the daemon at all.
func Call(socket string, req any) (*Response, error) {
	return CallContext(context.Background(), socket, req)
}

// CallContext is Call that gives up when ctx ends (a WAIT can take as long
// as its condition); closing the connection also ends our own pending WAIT
// there.
func CallContext(ctx context.Context, socket string, req any) (*Response, error) {
	c, err := Dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	r, err := exchange(c, socket, req)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("request to %s abandoned: %w", socket, context.Cause(ctx))
	}
	return r, err
}

// Dial connects to the daemon at socket and checks who serves it before
// the caller sends a byte: a connection to a socket served by anyone but
// us or root is closed and refused with an error naming the socket and
// the owner. Every client that talks to a daemon dials through here, the
// raw ATTACH stream included, so that no path skips the check.
func Dial(ctx context.Context, socket string) (*net.UnixConn, error) {
	if err := CheckSocketPath(socket); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, dialError(socket, err)
	}
	uc := c.(*net.UnixConn)
	if err := checkServer(uc, socket); err != nil {
		uc.Close()
		return nil, err
	}
	return uc, nil
}

// ErrNoAnswer is wrapped by the error of a call whose daemon closed the
// connection before it answered, which a daemon that is shutting down (or
// was killed mid-request) does. Callers tell it apart with errors.Is.
var ErrNoAnswer = errors.New("closed the connection without answering")

// exchange writes one request line on c and reads the answer line.
func exchange(c net.Conn, socket string, req any) (*Response, error) {
	line, err := Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	_, werr := c.Write(append(line, '\n'))
	// Read even when the write failed: a daemon that refuses the request
	// (another user, shutting down) answers and closes without reading it.
	br := bufio.NewReaderSize(io.LimitReader(c, MaxAnswer+1), 64<<10)
	resp, err := br.ReadBytes('\n')
	if len(resp) > MaxAnswer {
		return nil, fmt.Errorf("answer from %s is longer than %d bytes, the most a client reads", socket, MaxAnswer)
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(resp) == 0) {
		if werr != nil {
			return nil, fmt.Errorf("send request to %s: %w", socket, unwrapSyscall(werr))
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("daemon at %s %w", socket, ErrNoAnswer)
		}
		return nil, fmt.Errorf("read response from %s: %w", socket, unwrapSyscall(err))
	}
	var r Response
	if err := json.Unmarshal(resp, &r); err != nil {
		return nil, fmt.Errorf("bad response from %s: %w", socket, err)
	}
	return &r, nil
}

// CallData is Call for requests that answer data: it decodes the data of an
// ok response into out, and turns an error response into a DaemonError.
func CallData(socket string, req any, out any) error {
	return CallDataContext(context.Background(), socket, req, out)
}

// CallDataContext is CallData that gives up when ctx ends.
func CallDataContext(ctx context.Context, socket string, req any, out any) error {
	r, err := CallContext(ctx, socket, req)
	if err != nil {
		return err
	}
	if r.Status != "ok" {
		return r.Err()
	}
	if out != nil && len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, out); err != nil {
			return fmt.Errorf("bad response data from %s: %w", socket, err)
		}
	}
	return nil
}

// unwrapSyscall reduces "dial unix /x: connect: no such file or directory"
// to the errno, whose text callers print with their own context.
func unwrapSyscall(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	var sys interface{ Unwrap() error }
	if errors.As(err, &sys) {
		if inner := sys.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

func jsonUnmarshal(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}

// Marshal encodes v without HTML escaping, which only makes screen text
// harder to read for no gain on a Unix socket.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// IsTrue reports whether an optional flag of an answer (WaitData.Exited,
// say) is present and true.
func IsTrue(p *bool) bool { return p != nil && *p }
