//go:build darwin || freebsd || (linux && ptyplex_portable)

package ptyhost

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// exitWatcher notices children exiting without a thread blocked per child:
// one goroutine waits for SIGCHLD and then asks, for each watched child,
// whether it has exited (exitedStatus: waitid with WNOWAIT on Linux, the
// zombie's kinfo_proc on macOS and FreeBSD). Children stay unreaped zombies
// until Reap, so their pids and session ids stay reserved.
//
// SIGCHLDs coalesce, which is why each one rechecks every watched child.
// Children started by others in this process (os/exec) are never waited
// for here, so their Wait keeps working.
type exitWatcher struct {
	once sync.Once
	mu   sync.Mutex
	kids map[int]*portableChild
}

var exits = &exitWatcher{kids: map[int]*portableChild{}}

// start installs the SIGCHLD handler and the watcher goroutine, which
// lives as long as the process.
func (w *exitWatcher) start() {
	w.once.Do(func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGCHLD)
		go func() {
			for range sigs {
				w.scan()
			}
		}()
	})
}

// add watches c. A child that exited before it was added had its SIGCHLD
// handled already, so add checks c once itself.
func (w *exitWatcher) add(c *portableChild) {
	w.mu.Lock()
	w.kids[c.id] = c
	w.mu.Unlock()
	w.check(c)
}

func (w *exitWatcher) remove(c *portableChild) {
	w.mu.Lock()
	if w.kids[c.id] == c {
		delete(w.kids, c.id)
	}
	w.mu.Unlock()
}

func (w *exitWatcher) scan() {
	w.mu.Lock()
	kids := make([]*portableChild, 0, len(w.kids))
	for _, c := range w.kids {
		kids = append(kids, c)
	}
	w.mu.Unlock()
	for _, c := range kids {
		w.check(c)
	}
}

// check finishes c's wait if it has exited. Only the goroutine that
// removes c from the map closes c.exited, so it is closed once.
func (w *exitWatcher) check(c *portableChild) {
	st, done, err := exitedStatus(c.id)
	if !done && err == nil {
		return
	}
	w.mu.Lock()
	mine := w.kids[c.id] == c
	if mine {
		delete(w.kids, c.id)
	}
	w.mu.Unlock()
	if !mine {
		return
	}
	if err != nil {
		c.err = fmt.Errorf("wait for process %d: %w", c.id, err)
	} else {
		c.status = st
	}
	close(c.exited)
}
