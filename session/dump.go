//go:build unix

package session

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/ptyplex/ptyplex/session/wire"
)

// ptyDump is the --pty-dump file. Its first failed write ends it: were the
// dump to go on once a full disk had room again, the file would skip the
// bytes lost in between with nothing to mark the hole, and a reader would
// take it for the whole output. Stopped, it is a clean prefix of the
// session's output, and STATUS says where and why it ends.
type ptyDump struct {
	f *os.File

	// Owned by the PTY reader, the only writer.
	written int64
	stopped bool

	mu   sync.Mutex
	stop *wire.DumpStop // set once, when the dump stopped
}

// write appends b, unless an earlier write failed. A failure must not stop
// the session, so it is recorded, not returned.
func (p *ptyDump) write(b []byte) {
	if p == nil || p.stopped {
		return
	}
	n, err := p.f.Write(b)
	p.written += int64(n)
	if err == nil {
		return
	}
	p.stopped = true
	if errors.Is(err, os.ErrClosed) {
		// Teardown closed the file under the reader: the session is
		// ending, not the dump failing.
		return
	}
	p.mu.Lock()
	p.stop = &wire.DumpStop{Bytes: p.written, Error: err.Error()}
	p.mu.Unlock()
	// The daemon's stderr: seen with --no-daemon (a detached daemon's goes
	// to /dev/null, and STATUS is where its user learns of it).
	fmt.Fprintf(os.Stderr, "ptyplex: --pty-dump stopped after %d bytes: %v; the file ends there, a prefix of the output, and nothing more is written to it\n",
		p.written, err)
}

// stopInfo reports where and why the dump stopped, or nil while it goes on.
func (p *ptyDump) stopInfo() *wire.DumpStop {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop == nil {
		return nil
	}
	s := *p.stop
	return &s
}

func (p *ptyDump) close() {
	if p != nil {
		p.f.Close()
	}
}
