//go:build unix

package session

import (
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/screen"
)

// state is what the PTY reader, the exit watcher and the request handler
// share: the emulated screen, the activity flag and the exit status. One
// mutex guards all of it; every change closes changed so that waiters wake
// at once without polling.
type state struct {
	mu       sync.Mutex
	scr      *screen.Screen
	activity bool // output arrived since the last activity-mode STATUS/WAIT
	exited   bool
	exitCode int
	// gen counts the bytes read from the PTY since the start: the output
	// generation. A client that remembers it can wait for output that came
	// later (WAIT "after_gen"), whatever other clients do with the
	// activity flag.
	gen     int64
	changed chan struct{} // closed and replaced on every change
	// attachers get every byte of output as it is fed (attach.go).
	attachers map[*attacher]struct{}
	// waiters are the pending activity-mode and after_gen WAITs, oldest
	// first; the PTY reader answers them itself (wake.go).
	waiters []*waiter
	// cmds is the shell's commands, from its OSC 133 marks (commands.go).
	cmds commandLog
}

func newState(scr *screen.Screen) *state {
	return &state{scr: scr, changed: make(chan struct{})}
}

// notifyLocked wakes every waiter; st.mu must be held.
func (st *state) notifyLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// feed runs PTY output through the emulator and marks activity. It
// returns the emulator's answers to terminal queries and the WAITs this
// output satisfies, taken out of st.waiters. When there are none it wakes
// everyone waiting on changed; otherwise the caller answers those WAITs
// first and then calls notify, so that nothing else is woken ahead of
// their answers.
func (st *state) feed(p []byte) (replies []byte, due []*waiter) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.scr.Write(p)
	st.cmds.update(st.scr, time.Now())
	st.gen += int64(len(p))
	for a := range st.attachers {
		a.queue(p)
	}
	st.activity = true
	due = st.claimDueLocked()
	if len(due) == 0 {
		st.notifyLocked()
	}
	return st.scr.TakeReplies(), due
}

// notify wakes everyone waiting on changed.
func (st *state) notify() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.notifyLocked()
}

// setExited records the child's exit status and wakes waiters.
func (st *state) setExited(code int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.exited = true
	st.exitCode = code
	st.cmds.exited(st.scr, time.Now(), code)
	st.notifyLocked()
}
