//go:build unix

package session

import (
	"errors"
	"os"
	"sync"
	"time"
)

// exitDrainGrace bounds how long the exit watcher waits for the PTY reader
// to reach end of file before it reports the exit. The reader normally gets
// EOF right after the child's last write, so the final output is on the
// screen before anyone hears "exited"; a background job that keeps the PTY
// open would otherwise delay the exit report for ever.
const exitDrainGrace = 250 * time.Millisecond

// readPTY is the PTY reader goroutine: it runs until the PTY reports end of
// file or is closed, then closes d.readerDone.
func (d *Daemon) readPTY() {
	defer close(d.readerDone)
	buf := make([]byte, 64<<10)
	// The integration's startup files hold the marks' key: once the shell
	// sent its first mark it has read them, and they go at once, so that
	// nothing the shell runs later can read the key out of them.
	integFiles := d.integDir != ""
	for {
		n, err := d.proc.Read(buf)
		if n > 0 {
			// Counted before the feed: a WAIT for input compares this
			// with the fed generation to know no byte is in between.
			d.readBytes.Add(int64(n))
			d.dump.write(buf[:n])
			replies, due := d.st.feed(buf[:n])
			if integFiles {
				d.st.mu.Lock()
				marked := d.st.cmds.any
				d.st.mu.Unlock()
				if marked {
					d.removeIntegration()
					integFiles = false
				}
			}
			if len(due) > 0 {
				answerDue(due) // before anything else: this is the wake-up's path
				d.st.notify()
			}
			if len(replies) > 0 {
				d.replies.add(replies)
			}
		}
		if err != nil {
			return
		}
	}
}

// watchExit is the exit watcher goroutine: it records the exit status once
// the child has exited, then closes d.exited. It returns early when the
// process is closed during shutdown.
func (d *Daemon) watchExit() {
	// The status is read without reaping: the zombie keeps the child's
	// pid, and with it the session id, reserved until STOP, so ptyhost's
	// KillSession can still find leftovers of that session without
	// hitting a stranger that reused the pid.
	st, err := d.proc.ExitStatus()
	if err != nil {
		return
	}
	code := st.Code
	t := time.NewTimer(exitDrainGrace)
	select {
	case <-d.readerDone:
	case <-t.C:
	}
	t.Stop()
	d.st.setExited(code)
	close(d.exited)
}

// replyQueue carries the emulator's answers to terminal queries (cursor
// position, device status, device attributes) from the PTY reader to the
// reply writer. The reader must never block on a PTY write: a child that
// is busy writing and not reading would then deadlock with us.
type replyQueue struct {
	mu      sync.Mutex
	pending []byte
	wake    chan struct{} // capacity 1
}

func newReplyQueue() *replyQueue { return &replyQueue{wake: make(chan struct{}, 1)} }

func (q *replyQueue) add(b []byte) {
	q.mu.Lock()
	q.pending = append(q.pending, b...)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *replyQueue) take() []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.pending
	q.pending = nil
	return b
}

// writeReplies is the reply writer goroutine; it ends when done is closed
// or the PTY fails. A reply the child does not read within replyTimeout is
// dropped: a program that is not reading its input will not read it either,
// and INPUT must not wait behind it.
func (d *Daemon) writeReplies(done <-chan struct{}) {
	for {
		select {
		case <-d.replies.wake:
		case <-done:
			return
		}
		if b := d.replies.take(); len(b) > 0 {
			if _, err := d.writePTY(b, replyTimeout); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	}
}
