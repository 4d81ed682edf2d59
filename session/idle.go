//go:build unix

package session

import (
	"sync/atomic"
	"time"
)

// idleClock remembers when the last request arrived, for --idle-exit.
type idleClock struct{ last atomic.Int64 } // unix nanoseconds

func (c *idleClock) touch()           { c.last.Store(time.Now().UnixNano()) }
func (c *idleClock) since() time.Time { return time.Unix(0, c.last.Load()) }

// watchIdle is the idle-exit goroutine (Config.IdleExit > 0): once the
// program has exited, it shuts the daemon down when IdleExit has passed
// with no request since the exit or the last request, whichever is later,
// and nobody attached. It ends with the daemon.
func (d *Daemon) watchIdle() {
	select {
	case <-d.exited:
	case <-d.done:
		return
	}
	exitedAt := time.Now()
	t := time.NewTimer(d.cfg.IdleExit)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-d.done:
			return
		}
		from := exitedAt
		if last := d.idle.since(); last.After(from) {
			from = last
		}
		left := d.cfg.IdleExit - time.Since(from)
		if d.attached() {
			left = d.cfg.IdleExit // a person is watching the final screen
		}
		if left <= 0 {
			d.stop()
			return
		}
		t.Reset(left)
	}
}

// attached reports whether an attach client is connected (attach.go).
func (d *Daemon) attached() bool {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	return len(d.st.attachers) > 0
}
