//go:build unix

package persist

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
	"golang.org/x/sys/unix"
)

// The handover format: what a server hands to its next image in a live
// upgrade, all of it in this file, the writer beside the reader, so that
// a change to one is seen beside the other and HandoverFormat changes
// with them: the header (state, termState), what each terminal becomes
// in it (term.state) and what it becomes again (termState.term,
// restoredLife), the file (writeState, readState, parseState). How the
// file and the descriptors it names reach the next image is apart:
// upgrade.go and keeper_linux.go send them, handover_linux.go and
// handover_other.go have the platform's file and exec, resume.go starts
// the terminals it describes.

// HandoverFormat numbers the layout of the state a server hands to its
// next image. Two binaries with the same number can hand over to each
// other; a server refuses to upgrade to a binary that reports another.
const HandoverFormat = 1

// handoverMark is compiled into every binary that links this package,
// with the format it reads between the colon and the NUL. It must say
// HandoverFormat (TestHandoverMarkSaysTheFormat): a constant cannot be
// built from another with strconv.
const handoverMark = "\x00ptyplex-persist-handover-format:1\x00"

// keeperMark says, in a binary, that it takes descriptors from a keeper
// (--resume-keeper, see keeper_linux.go): an upgrade hands over through a
// keeper only to a binary that has it (candidate.keeper), and by
// inheritance, as before, to one that does not (an older version).
const keeperMark = "\x00ptyplex-persist-keeper:1\x00"

// HandoverBanner starts the line a binary prints for
// --persist-handover-format: "ptyplex-persist-handover FORMAT VERSION".
const HandoverBanner = "ptyplex-persist-handover"

// Terminals counts n terminals in words: "1 terminal", "3 terminals".
func Terminals(n int) string {
	if n == 1 {
		return "1 terminal"
	}
	return fmt.Sprintf("%d terminals", n)
}

// HandoverLine is what --persist-handover-format prints.
func HandoverLine() string {
	return fmt.Sprintf("%s %d %s", HandoverBanner, HandoverFormat, version.Version)
}

// state is the header of the handover file; the journals follow it, in
// the order of Terms, each End-Start bytes.
type state struct {
	Format     int           `json:"format"`
	Name       string        `json:"name"`
	From       string        `json:"from"` // the version that wrote it
	Journal    int           `json:"journal"`
	Total      int64         `json:"total"`
	KeepExited time.Duration `json:"keepExited"`
	Listener   int           `json:"listener"` // descriptor of the listening socket
	Lock       int           `json:"lock"`     // descriptor of the flock'ed lock file, or -1
	// HoldGen is the latest holder generation the server gave (see
	// holdgen.go); absent from older binaries' states, which gave none.
	HoldGen uint64      `json:"holdGen,omitempty"`
	Terms   []termState `json:"terms"`
}

// termState is one terminal of state: every field of term that outlives
// the connections (all of them are closed before it is written).
type termState struct {
	ID   string   `json:"id"`
	Pid  int      `json:"pid"`
	PTS  string   `json:"pts"`
	Cmd  string   `json:"cmd"`
	Args []string `json:"args,omitempty"`
	// Launch is absent from an older server's state: re-adoption then
	// compares the command and arguments alone.
	Launch *launchSpec `json:"launch,omitempty"`
	Park   bool        `json:"park"`
	Quota  int         `json:"quota"`
	Cols   uint16      `json:"cols"`
	Rows   uint16      `json:"rows"`
	// The journal holds [Start, End).
	Start  uint64 `json:"start"`
	End    uint64 `json:"end"`
	Sent   uint64 `json:"sent"`
	Acked  uint64 `json:"acked"`
	Credit uint64 `json:"credit"`
	// Running: not reaped; the child (maybe a zombie) is adopted by pid.
	Running   bool       `json:"running"`
	Closing   bool       `json:"closing"`
	Exited    bool       `json:"exited"`
	Exit      proto.Exit `json:"exit"`
	ExitSent  bool       `json:"exitSent"`
	ReadEnded bool       `json:"readEnded"`
	// Master is the PTY master's descriptor, -1 once the child was
	// reaped (the master is closed then).
	Master int `json:"master"`
	// Input is what was queued for the child and not yet written.
	Input  [][]byte  `json:"input,omitempty"`
	KillAt time.Time `json:"killAt,omitzero"`
	KeepAt time.Time `json:"keepAt,omitzero"`
	// OrphanMs is its OPEN's "orphanMs"; OrphanAt when its orphan clock
	// ends (zero: none runs; a new image starts a full one).
	OrphanMs int64     `json:"orphanMs,omitempty"`
	OrphanAt time.Time `json:"orphanAt,omitzero"`
	// OrphanClosed says the orphan bound closed it, so that a
	// re-adopting OPEN gets a new terminal instead (absent from older
	// binaries' states: re-adopted then, as before).
	OrphanClosed bool `json:"orphanClosed,omitempty"`
	// Colours are the colours the answers while detached give
	// (answers.go); absent from older binaries' states: the defaults.
	Colours *coloursHandover `json:"colours,omitempty"`
	// Answered are the replies the answers gave while detached, for the
	// next host's replay (answers.go); absent from older binaries'.
	Answered []answeredHandover `json:"answered,omitempty"`
	// VT is the mode tracker (modes.go); absent from older binaries'
	// states, whose trackers are rebuilt from the journal.
	VT *vtHandover `json:"vt,omitempty"`
	// DiskLater is the journal on disk a terminal could not get (a full
	// disk, diskLater), for the next image to make once it can.
	DiskLater *diskLaterState `json:"diskLater,omitempty"`
	// HoldGen and HoldRoot are its holder generation and the start of
	// its holder lineage (term.holdGen, holdRoot); absent from older
	// binaries' states: 0, which any "resume" may take back.
	HoldGen  uint64 `json:"holdGen,omitempty"`
	HoldRoot uint64 `json:"holdRoot,omitempty"`
}

type diskLaterState struct {
	Meta diskMeta `json:"meta"`
	Why  string   `json:"why"`
}

// stateHeader is the header of s's state, without its terminals; ln and
// lock are the descriptors of the listener and the lock file (-1: none).
func (s *Server) stateHeader(ln, lock int) state {
	return state{Format: HandoverFormat, Name: s.opts.Name, From: version.Version, Journal: s.opts.Journal,
		Total: s.opts.Total, KeepExited: s.opts.KeepExited, Listener: ln, Lock: lock, HoldGen: s.holdGens.Load()}
}

// writeState writes the handover file: st's header as one line of JSON,
// then the journals of terms (frozen, in the order of st.Terms), each
// End-Start bytes. parseState reads it.
func writeState(f io.Writer, st state, terms []*term) error {
	hdr, err := json.Marshal(st)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(hdr)
	w.WriteByte('\n')
	for _, t := range terms {
		// Straight from the chunks: the frozen journal does not change,
		// and a copy would hold every journal a third time.
		t.mu.Lock()
		t.j.writeTo(w)
		t.mu.Unlock()
	}
	return w.Flush()
}

// readState reads the state file and checks it: the format, every
// descriptor it names, the journals' lengths. It changes nothing but
// a listener it makes of a duplicate of the handed-over one.
//
// The file is mapped, not read, so that the journals are not held a third
// time while they are copied into their rings; the caller unmaps it.
//
// remap, if not nil, gives the descriptor each number in the header
// stands for here (by its decimal number): what came back from a keeper
// has other numbers than the writer's.
func readState(fd int, remap map[string]int) (st state, journals [][]byte, ln *net.UnixListener, mapped []byte, err error) {
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		return st, nil, nil, nil, fmt.Errorf("the state (descriptor %d): %w", fd, err)
	}
	if fst.Size == 0 {
		return st, nil, nil, nil, fmt.Errorf("the state (descriptor %d) is empty", fd)
	}
	all, err := unix.Mmap(fd, 0, int(fst.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return st, nil, nil, nil, fmt.Errorf("map the state (descriptor %d): %w", fd, err)
	}
	defer func() {
		if err != nil {
			unix.Munmap(all)
		}
	}()
	st, journals, ln, err = parseState(all, remap)
	return st, journals, ln, all, err
}

func parseState(all []byte, remap map[string]int) (st state, journals [][]byte, ln *net.UnixListener, err error) {
	hdr, rest, ok := bytes.Cut(all, []byte("\n"))
	if !ok {
		return st, nil, nil, fmt.Errorf("the state has no header (%d bytes)", len(all))
	}
	var probe struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(hdr, &probe); err != nil {
		return st, nil, nil, fmt.Errorf("the state's header: %w", err)
	}
	if probe.Format != HandoverFormat {
		return st, nil, nil, fmt.Errorf("the state is in handover format %d; this binary reads format %d", probe.Format, HandoverFormat)
	}
	if err := json.Unmarshal(hdr, &st); err != nil {
		return st, nil, nil, fmt.Errorf("the state's header: %w", err)
	}
	if remap != nil {
		renumber := func(what string, n *int) error {
			fd, ok := remap[strconv.Itoa(*n)]
			if !ok {
				return fmt.Errorf("%s: descriptor %d was not handed over", what, *n)
			}
			*n = fd
			return nil
		}
		if err := renumber("listener", &st.Listener); err != nil {
			return st, nil, nil, err
		}
		if st.Lock >= 0 {
			if err := renumber("lock", &st.Lock); err != nil {
				return st, nil, nil, err
			}
		}
		for i := range st.Terms {
			if ts := &st.Terms[i]; ts.Running {
				if err := renumber(fmt.Sprintf("terminal %q's PTY master", ts.ID), &ts.Master); err != nil {
					return st, nil, nil, err
				}
			}
		}
	}
	open := func(what string, fd int) error {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return fmt.Errorf("%s: descriptor %d: %w", what, fd, err)
		}
		return nil
	}
	if err := open("listener", st.Listener); err != nil {
		return st, nil, nil, err
	}
	if st.Lock >= 0 {
		if err := open("lock", st.Lock); err != nil {
			return st, nil, nil, err
		}
	}
	seen := map[string]bool{}
	for _, ts := range st.Terms {
		if ts.ID == "" || seen[ts.ID] {
			return st, nil, nil, fmt.Errorf("terminal id %q is empty or twice in the state", ts.ID)
		}
		seen[ts.ID] = true
		n := ts.End - ts.Start
		if ts.End < ts.Start || ts.Quota < 1 || n > uint64(ts.Quota) || n > uint64(len(rest)) {
			return st, nil, nil, fmt.Errorf("terminal %q: journal [%d, %d) of %d bytes does not fit (%d bytes left in the state)", ts.ID, ts.Start, ts.End, ts.Quota, len(rest))
		}
		journals = append(journals, rest[:n:n])
		rest = rest[n:]
		if ts.Running {
			if ts.Pid <= 0 {
				return st, nil, nil, fmt.Errorf("terminal %q: pid %d", ts.ID, ts.Pid)
			}
			if err := open(fmt.Sprintf("terminal %q's PTY master", ts.ID), ts.Master); err != nil {
				return st, nil, nil, err
			}
		}
	}
	if len(rest) != 0 {
		return st, nil, nil, fmt.Errorf("%d bytes after the last journal in the state", len(rest))
	}
	// The listener last: of all the checks only it makes something.
	dup, err := unix.FcntlInt(uintptr(st.Listener), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return st, nil, nil, fmt.Errorf("listener: %w", err)
	}
	f := os.NewFile(uintptr(dup), "listener")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return st, nil, nil, fmt.Errorf("listener: %w", err)
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return st, nil, nil, fmt.Errorf("listener: descriptor %d is a %T, not a Unix socket", st.Listener, l)
	}
	ul.SetUnlinkOnClose(false)
	return st, journals, ul, nil
}

// state describes the frozen t.
func (t *term) state() (termState, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := termState{ID: t.id, Pid: t.pid, Cmd: t.cmd, Args: t.args, Launch: t.launch, Park: t.park, Quota: t.quota,
		Cols: t.cols, Rows: t.rows, Start: t.j.start, End: t.j.end, Sent: t.sent, Acked: t.acked, Credit: t.credit.Wire(),
		Running: t.life.Running(), Closing: t.life == engine.Closing, Exited: t.exitedLocked(), Exit: t.exit, ExitSent: t.end == exitWritten,
		ReadEnded: t.readEnded, Master: -1, KeepAt: t.keepAt, VT: t.vtHandoverLocked(), OrphanMs: t.orphan.ms, OrphanAt: t.orphan.at,
		OrphanClosed: t.orphan.closed, Colours: t.answers.colours(), Answered: t.answers.answeredState(), HoldGen: t.holdGen,
		HoldRoot: t.holdRoot}
	if t.proc != nil {
		ts.PTS = t.proc.TTY()
	}
	if t.life == engine.Closing {
		ts.KillAt = t.killAt
	}
	if l := t.diskLater; l != nil {
		ts.DiskLater = &diskLaterState{Meta: l.meta, Why: l.why}
	}
	ts.Input = t.input.Queued()
	if t.life.Running() {
		// Not reaped (frozen terminals are not): the master is open.
		fd, err := t.proc.MasterFD()
		if err != nil {
			return ts, fmt.Errorf("terminal %q: PTY master: %w", t.id, err)
		}
		ts.Master = fd
	}
	return ts, nil
}

// term makes the terminal ts describes, with journal as its journal's
// bytes; restore starts what it needs.
func (ts termState) term(s *Server, journal []byte) *term {
	t := &term{id: ts.ID, s: s, pid: ts.Pid, cmd: ts.Cmd, args: ts.Args, launch: ts.Launch, park: ts.Park, quota: ts.Quota,
		readDone: make(chan struct{}), reaped: make(chan struct{}), j: newJournal(ts.Quota),
		sent: ts.Sent, acked: ts.Acked, credit: engine.CreditFromWire(ts.Credit), cols: ts.Cols, rows: ts.Rows,
		life: restoredLife(ts), exit: ts.Exit,
		readEnded: ts.ReadEnded, input: engine.NewInputQueue(&s.input), holdGen: ts.HoldGen,
		holdRoot: ts.HoldRoot}
	if ts.ExitSent {
		t.end = exitWritten
	}
	t.initConds()
	t.input.Restore(ts.Input)
	t.j.start, t.j.end = ts.Start, ts.Start
	t.j.append(journal)
	t.vt = ts.restoreTracker(journal)
	return t
}

// restoredLife is the state of a handed-over terminal: the handover
// format keeps the flags the state was once made of.
func restoredLife(ts termState) engine.State {
	switch {
	case ts.Exited || !ts.Running:
		return engine.Reaped
	case ts.Closing:
		return engine.Closing
	}
	return engine.Live
}
