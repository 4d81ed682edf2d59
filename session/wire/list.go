//go:build unix

package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Session states in a Listed.
const (
	StateRunning     = "running"
	StateExited      = "exited"
	StateStale       = "stale"       // nobody listens on the socket: the daemon died
	StateUnreachable = "unreachable" // the daemon accepted but did not answer STATUS
)

// Listed is one session of this user as List sees it.
type Listed struct {
	Socket     string    `json:"socket"`
	PID        int       `json:"pid,omitempty"` // the daemon's; 0 when unknown
	Command    []string  `json:"command,omitempty"`
	State      string    `json:"state"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	Size       *Size     `json:"size,omitempty"`
	Started    time.Time `json:"started"`
	AgeSeconds int64     `json:"age_seconds"`
	// Registered is false for a socket found only by its
	// /tmp/interminai-* directory (another tool's daemon, or one whose
	// registry entry is gone); its command is then unknown.
	Registered bool   `json:"registered"`
	Problem    string `json:"problem,omitempty"` // why it is stale or unreachable
	rec        Record
	// superseded: the record's daemon is gone and another one listens on
	// its socket now; pruning removes the record, not the live socket.
	superseded bool
}

// listProbeTimeout bounds the STATUS List sends to each session.
const listProbeTimeout = 2 * time.Second

// List returns this user's sessions, oldest first: those in the registry
// and any live or stale socket in a /tmp/interminai-* directory of ours
// (unless PTYPLEX_RUNTIME_DIR names a registry of its own).
// Each is asked for its STATUS.
func List(ctx context.Context) ([]Listed, error) {
	dir, err := RegistryDir()
	if err != nil {
		return nil, err
	}
	recs := readRecords(dir)
	known := map[string]bool{}
	for _, r := range recs {
		known[r.Socket] = true
	}
	out := make([]Listed, 0, len(recs))
	for _, r := range recs {
		out = append(out, Listed{Socket: r.Socket, PID: r.PID, Command: r.Command, Started: r.Started, Registered: true, rec: r})
	}
	// A registry chosen with PTYPLEX_RUNTIME_DIR is a set of sessions of
	// its own: the shared /tmp directories are not scanned then.
	var socks []string
	if os.Getenv(RuntimeDirEnv) == "" {
		socks, _ = filepath.Glob("/tmp/" + AutoDirPrefix + "*/socket")
	}
	for _, s := range socks {
		fi, err := os.Lstat(s)
		if known[s] || err != nil || fi.Mode()&os.ModeSocket == 0 || !ownedByUs(fi) {
			continue
		}
		out = append(out, Listed{Socket: s, Started: fi.ModTime(), rec: Record{Socket: s, Auto: true}})
	}
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { probe(ctx, &out[i]) })
	}
	wg.Wait()
	now := time.Now()
	for i := range out {
		out[i].AgeSeconds = int64(now.Sub(out[i].Started) / time.Second)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// probe fills in the state of l from its daemon.
func probe(ctx context.Context, l *Listed) {
	ctx, cancel := context.WithTimeout(ctx, listProbeTimeout)
	defer cancel()
	if err := CheckSocketPath(l.Socket); err != nil {
		// (A session started with a relative path in a deep directory.)
		// The kernel refuses to connect to it from here: that says
		// nothing of its daemon, and it must not read as stale, which
		// prune would remove.
		l.State, l.Problem = StateUnreachable, err.Error()
		return
	}
	if fi, err := os.Lstat(l.Socket); err == nil && l.Registered && !l.rec.Started.IsZero() && fi.ModTime().After(l.rec.Started) && ownedByUs(fi) {
		// The socket was made after the record's daemon started (which
		// it does after binding): the path was reused, that daemon died,
		// and whoever answers there now is a session with a record of
		// its own. This record describes nothing alive; showing the new
		// daemon's state under it listed that session twice. (The times,
		// not the pids: a daemon in another pid namespace is seen here
		// under another pid.) Only a socket of ours: one another user
		// made there is reported as such below, after the connection
		// shows whose it is.
		l.State, l.superseded = StateStale, true
		l.Problem = fmt.Sprintf("its daemon (pid %d) is gone: the socket was made again at %s, by a session started since", l.rec.PID, fi.ModTime().Format(time.RFC3339))
		return
	}
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", l.Socket)
	if err != nil {
		l.State, l.Problem = StateStale, "nobody listens: "+unwrapSyscall(err).Error()
		if errors.Is(err, syscall.EAGAIN) || ctx.Err() != nil {
			l.State = StateUnreachable // a full backlog: alive but busy
		}
		return
	}
	// A socket another user squatted at a registered path is not our
	// daemon: say so rather than show its answers as our session's state.
	if err := checkServer(c.(*net.UnixConn), l.Socket); err != nil {
		c.Close()
		l.State, l.Problem = StateUnreachable, err.Error()
		return
	}
	if pid := peerPID(c); pid > 0 {
		l.PID = pid
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	r, err := exchange(c, l.Socket, map[string]any{"type": "STATUS"})
	if err == nil && r.Status != "ok" {
		err = r.Err()
	}
	var st StatusData
	if err == nil {
		err = jsonUnmarshal(r.Data, &st)
	}
	if err != nil {
		l.State, l.Problem = StateUnreachable, err.Error()
		if ctx.Err() != nil {
			l.Problem = fmt.Sprintf("no answer to STATUS within %v", listProbeTimeout)
		}
		return
	}
	l.Size = &Size{Rows: st.Size.Rows, Cols: st.Size.Cols}
	if st.Running {
		l.State = StateRunning
	} else {
		l.State, l.ExitCode = StateExited, st.ExitCode
	}
}

// Prune removes what stale sessions left behind: the socket file (after
// checking once more that nobody listens), its private /tmp/interminai-*
// directory, and the registry entry. It returns the sockets of the
// sessions it removed.
func Prune(list []Listed) (removed []string, err error) {
	var errs []error
	for _, l := range list {
		if l.State != StateStale {
			continue
		}
		if l.superseded {
			// Only the record goes: the socket is another session's.
			if l.rec.file != "" {
				os.Remove(l.rec.file)
			}
			removed = append(removed, l.Socket)
			continue
		}
		if fi, e := os.Lstat(l.Socket); e == nil && fi.Mode()&os.ModeSocket != 0 {
			if c, e := net.Dial("unix", l.Socket); e == nil {
				c.Close() // a daemon came up on it meanwhile: not stale
				continue
			}
			if e := os.Remove(l.Socket); e != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", l.Socket, e))
				continue
			}
		}
		if dir := filepath.Dir(l.Socket); strings.HasPrefix(filepath.Base(dir), AutoDirPrefix) && filepath.Dir(dir) == "/tmp" {
			os.Remove(dir) // only when empty
		}
		if l.rec.file != "" {
			os.Remove(l.rec.file)
		}
		removed = append(removed, l.Socket)
	}
	return removed, errors.Join(errs...)
}

func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// checkPrivateDir refuses a registry directory that another user owns or
// that others may write to: they could plant entries there.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("session registry: %w", err)
	}
	if !fi.IsDir() || !ownedByUs(fi) || fi.Mode().Perm()&0o022 != 0 {
		why := fmt.Sprintf("mode %v", fi.Mode())
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			why = "it belongs to " + userName(st.Uid) + ", " + why
		}
		return fmt.Errorf("session registry %s: not a private directory of this user (%s)", dir, why)
	}
	return nil
}

// peerPID is the pid of the process at the other end of c (the daemon).
func peerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	rc.Control(func(fd uintptr) { pid = socketPeerPID(int(fd)) })
	return pid
}
