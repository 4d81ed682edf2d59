//go:build unix

package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// entry is one session this server started.
type entry struct {
	ID         string  // short handle: "s1", "s2", ...
	Socket     string  // absolute socket path: the handle humans use with the CLI
	PID        int     // the daemon's pid, for people: signals go through daemon
	daemon     *daemon // the server's hold on the daemon; nil if it could not take one
	Command    []string
	Persistent bool // survives the client's disconnect
	AutoSocket bool // the socket lives in a private /tmp/interminai-* directory
	Started    time.Time
}

// registry holds the sessions this server started, by short id. One mutex,
// held only to read or change the map.
type registry struct {
	mu      sync.Mutex
	next    int
	entries map[string]*entry
	closed  bool // the client has gone: no more sessions may be added
}

func newRegistry() *registry { return &registry{entries: map[string]*entry{}} }

// add records e under a fresh short id and returns it. After close it
// refuses (ok false): a start still in flight when the client left must
// not leave behind a session nobody will stop.
func (r *registry) add(e *entry) (_ *entry, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return e, false
	}
	r.next++
	e.ID = "s" + strconv.Itoa(r.next)
	r.entries[e.ID] = e
	return e, true
}

// close refuses further adds and returns the entries, in start order.
func (r *registry) close() []*entry {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return r.all()
}

func (r *registry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, id)
}

// all returns the entries in start order.
func (r *registry) all() []*entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*entry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i].ID[1:])
		b, _ := strconv.Atoi(out[j].ID[1:])
		return a < b
	})
	return out
}

// target is a resolved session handle: the socket to talk to and, when this
// server started the session, its registry entry.
type target struct {
	socket string
	entry  *entry // nil for a session started elsewhere (e.g. by the CLI)
}

// resolve accepts a short id ("s1") or a socket path. A path need not be
// one of ours: an agent may drive a session a human started with
// `ptyplex start`, it just is not stopped on disconnect.
func (r *registry) resolve(handle string) (target, error) {
	h := strings.TrimSpace(handle)
	if h == "" {
		return target{}, fmt.Errorf("missing session: pass the handle the start tool returned (e.g. \"s1\") or a socket path")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.entries[h]; ok {
		return target{socket: e.Socket, entry: e}, nil
	}
	if strings.ContainsRune(h, '/') {
		abs, err := filepath.Abs(h)
		if err != nil {
			return target{}, fmt.Errorf("session %q: %v", handle, err)
		}
		for _, e := range r.entries {
			if e.Socket == abs {
				return target{socket: e.Socket, entry: e}, nil
			}
		}
		if fi, err := os.Stat(abs); err != nil {
			return target{}, fmt.Errorf("unknown session %q: No such file or directory (is it running? the list tool shows the sessions this server started)", handle)
		} else if fi.Mode()&os.ModeSocket == 0 {
			return target{}, fmt.Errorf("unknown session %q: not a socket", handle)
		}
		return target{socket: abs}, nil
	}
	known := make([]string, 0, len(r.entries))
	for id := range r.entries {
		known = append(known, id)
	}
	sort.Strings(known)
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return target{}, fmt.Errorf("unknown session %q: expected a handle returned by the start tool (current: %s) or a socket path", handle, list)
}
