package watchdog

import (
	"crypto/rand"
	"encoding/hex"
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
func (wd *Watchdog) monitor(cmd *exec.Cmd, w *os.File) {
	err := cmd.Wait()
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.closed || wd.w != w {
		return
	}
	wd.w.Close()
	wd.w = nil
	wd.logf("watchdog (pid %d) exited while we run (%v); starting a new one", cmd.Process.Pid, err)
	wd.restartLocked()
}

// restartLocked starts a new watchdog, at most once per restartInterval
// (later if need be, from a timer), and re-announces the live terminals.
func (wd *Watchdog) restartLocked() {
	if wait := time.Until(wd.started.Add(restartInterval)); wait > 0 {
		time.AfterFunc(wait, wd.restart)
		return
	}
	if err := wd.spawnLocked(); err != nil {
		wd.started = time.Now()
		wd.logf("cannot start a new watchdog (%v); trying again in %v", err, restartInterval)
		time.AfterFunc(restartInterval, wd.restart)
		return
	}
	for _, line := range wd.live {
		wd.sendLocked(line)
	}
	wd.logf("new watchdog (pid %d) started, watching %d terminals", wd.pid, len(wd.live))
}

func (wd *Watchdog) restart() {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.closed || wd.w != nil {
		return
	}
	wd.restartLocked()
}

// newToken is a random word that only we and our watchdog know.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
