//go:build unix

package watchdog

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// restartInterval is the least time between two watchdog starts, so that
// something killing each new watchdog at once cannot make us fork in a
// tight loop.
const restartInterval = time.Second

// monitor waits for one watchdog process to exit. If it was still the
// current one and we did not close it, it died under us: say so and start
// a new one, which learns every terminal still announced.
func (wd *Watchdog) monitor(cmd *exec.Cmd, w *os.File, exited chan struct{}) {
	err := cmd.Wait()
	close(exited)
	wd.mu.Lock()
	if wd.closed || wd.w != w {
		wd.mu.Unlock()
		return
	}
	wd.w.Close()
	wd.w = nil
	wd.logf("watchdog (pid %d) exited while we run (%v); starting a new one", cmd.Process.Pid, err)
	wd.mu.Unlock()
	wd.restart()
}

// restart starts a new watchdog, at most once per restartInterval (later
// if need be, from a timer), and re-announces the live terminals. The
// start itself runs without mu (see spawn); meanwhile Watch and Forget
// only record, and the new watchdog is told everything recorded.
func (wd *Watchdog) restart() {
	wd.mu.Lock()
	if wd.closed || wd.w != nil || wd.spawning {
		wd.mu.Unlock()
		return
	}
	if wait := time.Until(wd.started.Add(restartInterval)); wait > 0 {
		wd.mu.Unlock()
		time.AfterFunc(wait, wd.restart)
		return
	}
	wd.spawning = true
	wd.mu.Unlock()

	sp, err := spawn()

	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.spawning = false
	if err != nil {
		wd.started = time.Now()
		wd.logf("cannot start a new watchdog (%v); trying again in %v", err, restartInterval)
		time.AfterFunc(restartInterval, wd.restart)
		return
	}
	wd.installLocked(sp)
	if wd.closed {
		// Closed while it started: it is told goodbye, as Close would
		// have told it, and has nothing to watch.
		wd.sendLocked(goodbye + "\n")
		wd.w.Close()
		return
	}
	for _, line := range wd.live {
		wd.sendLocked(line)
	}
	wd.logf("new watchdog (pid %d) started, watching %s", wd.pid, terminals(len(wd.live)))
}

// terminals counts n terminals in English: "1 terminal", "2 terminals".
func terminals(n int) string {
	if n == 1 {
		return "1 terminal"
	}
	return fmt.Sprintf("%d terminals", n)
}

// newToken is a random word that only we and our watchdog know.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
