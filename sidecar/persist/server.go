//go:build unix

package persist

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/session/wire"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// Defaults of Options.
const (
	DefaultJournal    = 4 << 20
	DefaultTotal      = 8 << 30 // 2048 terminals at the default journal; journals are allocated as they fill
	DefaultKeepExited = 24 * time.Hour
	// DefaultOrphanTimeout is in orphan.go, with why it is what it is.
	// MaxJournal bounds the journal one OPEN may ask for.
	MaxJournal = 256 << 20
)

// Options configure a Server.
type Options struct {
	Log *log.Logger
	// Journal is the journal size of a terminal whose OPEN names none.
	Journal int
	// Total caps the sum of all terminals' journal sizes: an OPEN past
	// it is refused, so that the server's memory stays bounded.
	Total int64
	// KeepExited is how long a terminal that exited while detached is
	// kept, with its journal, for a host to read.
	KeepExited time.Duration
	// OrphanTimeout is how long a running terminal may go with no holder
	// before it is closed, unless its OPEN says ("orphanMs"); 0 means
	// DefaultOrphanTimeout, a negative value never.
	OrphanTimeout time.Duration
	// Name is the server's name; Args are the flags it was started with
	// (after the program name). A live upgrade executes the new binary
	// with Args and the flags that pass the state on.
	Name string
	Args []string
	// JournalDir, if set, keeps every journal on disk too, so that a
	// crash of the server loses no output (diskjournal.go); the bound of
	// this server's part of it is JournalDirMax, and the files written
	// are fsync'd every JournalSync (0: DefaultJournalSync, <0: never).
	JournalDir    string
	JournalDirMax int64
	JournalSync   time.Duration
}

// Server owns the terminals and serves connections to them.
type Server struct {
	opts Options

	mu       sync.Mutex
	terms    map[string]*term // every terminal, attached or not: the state a live upgrade hands over
	reserved int64            // sum of terms' journal quotas
	conns    map[*conn]struct{}
	stopping bool
	stopped  chan struct{} // closed once Stop began
	stopOnce sync.Once

	// input counts the INPUT bytes queued for all terminals.
	input engine.InputBudget
	// dropping says the server is stopping: every journal reads to its
	// end, whatever its mode.
	dropping atomic.Bool

	ln        *net.UnixListener // what Serve accepts on
	connGone  *sync.Cond        // on mu: a connection ended
	upgrading bool              // an UPGRADE is being carried out
	// relisten, set while an upgrade has closed the listener, gives
	// Serve the listener to go on with if the upgrade is rolled back
	// (nil: end). After a successful upgrade nobody sends: the process
	// is the new binary by then.
	relisten chan *net.UnixListener
	// disk is the journal directory (--journal-dir), nil without one;
	// recovered, what was found in it and not yet taken (revive.go).
	disk      *diskDir
	recovered []recovered
	// wd is the watchdog (watchdog.go), nil without one; newWatchdog
	// starts another. Both on mu.
	wd          Watchdog
	newWatchdog func() (Watchdog, error)
	// holdGens is the latest holder generation given (see
	// term.holdGen): one counter for every terminal, so that a terminal
	// opened anew under an id never gives a generation an earlier one
	// under that id gave. A live upgrade hands it over.
	holdGens atomic.Uint64
}

// New returns a server with no terminals.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = log.New(io.Discard, "", 0)
	}
	if opts.Journal <= 0 {
		opts.Journal = DefaultJournal
	}
	if opts.Total <= 0 {
		opts.Total = DefaultTotal
	}
	if opts.KeepExited <= 0 {
		opts.KeepExited = DefaultKeepExited
	}
	if opts.OrphanTimeout == 0 {
		opts.OrphanTimeout = DefaultOrphanTimeout
	}
	s := &Server{opts: opts, terms: make(map[string]*term), conns: make(map[*conn]struct{}),
		stopped: make(chan struct{})}
	s.connGone = sync.NewCond(&s.mu)
	s.holdGens.Store(holdGenSeed(time.Now()))
	return s
}

func (s *Server) logf(format string, args ...any) { s.opts.Log.Printf(format, args...) }

// Stopped is closed once the server was asked to stop (a STOP frame).
func (s *Server) Stopped() <-chan struct{} { return s.stopped }

// isStopped says Stop began: nothing that waits for a host is armed
// any more.
func (s *Server) isStopped() bool {
	select {
	case <-s.stopped:
		return true
	default:
		return false
	}
}

// Serve accepts connections on ln until it is closed (by Shutdown). A
// peer that is not our own user is refused before a byte is read: the
// terminals run as us. A live upgrade closes the listener too; Serve
// then waits for its outcome and, if it was rolled back, goes on.
func (s *Server) Serve(ln *net.UnixListener) error {
	me := uint32(os.Geteuid())
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	var pause time.Duration // the wait after a failed accept, doubling
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				s.mu.Lock()
				w, cur, stopping := s.relisten, s.ln, s.stopping
				s.mu.Unlock()
				if w == nil {
					// An upgrade rolled back before we looked has
					// installed its new listener already.
					if cur != nil && cur != ln && !stopping {
						ln = cur
						continue
					}
					return nil
				}
				if ln = <-w; ln == nil {
					return nil
				}
				continue
			}
			// Out of descriptors (EMFILE, ENFILE: a host with many
			// terminals or connections) or of kernel memory: the
			// connection waits in the backlog, and ending here would end
			// every terminal with the server. Wait for descriptors to be
			// freed and accept again; a listener that is closed meanwhile
			// says so on the next accept.
			if pause == 0 {
				pause = 5 * time.Millisecond
				s.logf("accept: %v; accepting again once it succeeds", err)
			} else {
				pause = min(2*pause, time.Second)
			}
			time.Sleep(pause)
			continue
		}
		if pause != 0 {
			s.logf("accepting connections again")
			pause = 0
		}
		uid, err := wire.PeerUID(c)
		if err != nil || uid != me {
			s.logf("refusing a connection from uid %d (we are %d): %v", uid, me, err)
			refuse(c, fmt.Sprintf("refused: this persistent sidecar serves uid %d only", me))
			continue
		}
		go s.serveConn(c)
	}
}

// refuse tells a peer why and hangs up. What it sent is read and thrown
// away until it hangs up too (for a second at most): closing a socket
// with unread data resets the connection, and the peer would lose the
// reason.
func refuse(c *net.UnixConn, msg string) {
	go func() {
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		proto.WriteFrame(c, proto.TypeError, proto.Marshal(proto.Error{Message: msg}))
		c.CloseWrite()
		io.Copy(io.Discard, io.LimitReader(c, 1<<20))
	}()
}

// conn is one host connection. It owns nothing a terminal needs: when it
// ends, its terminals are detached and go on.
//
// Writes gather: every sender (a terminal's pump, the dispatch loop)
// queues its frame and waits until it is on the socket; whichever sender
// finds no write in progress takes everything queued so far and writes it
// with one writev(2). So the frames of terminals flooding at once share a
// system call, as with the plain sidecar's writer, a lone frame goes out
// at once, and no byte is copied into a buffer on the way: a pump hands
// over slices of its journal, which stay put until write returns.
type conn struct {
	s *Server
	l link
	// peer is the socket of the process at the other end, for its
	// credentials: the host's own, or for a host whose descriptors were
	// handed over, its bridge's.
	peer *net.UnixConn
	mu   sync.Mutex
	cond *sync.Cond // on mu: a batch was written, or the writer left
	// queue is the frames waiting for the next batch; spare is the
	// previous batch's slice, reused so that queueing allocates nothing.
	queue, spare net.Buffers
	busy         bool   // a sender is writing a batch
	taken        uint64 // batches taken off the queue
	written      uint64 // batches written (or failed)
	// broken is set after a failed write (werr); later frames are dropped.
	broken bool
	werr   error
	// shut says why the server itself ended the connection (a takeover
	// of a host that stopped reading, Stop, an upgrade): the read error
	// that follows is not the host's doing. hung says it was because the
	// host stopped reading (abort).
	shut string
	hung bool
	// readopt: an OPEN of the id of a terminal nobody holds re-adopts it
	// (readopt.go). Set by a HELLO that asks, read by the dispatch loop.
	readopt bool
	// env is the environment this connection's OPENs start from: its
	// bridge's, from the bridge's HELLO; nil for the server's own. Set
	// and read by the dispatch loop.
	env []string
	// cwd is where this connection's OPENs without a cwd start: its
	// bridge's working directory, from the bridge's HELLO; "" for the
	// server's own. Set and read by the dispatch loop.
	cwd string
	// ahead is the frame reader of the dispatch loop, which reads on
	// while dispatch waits for input room (lookahead.go). Set by
	// readFrames before the first frame.
	ahead *engine.Lookahead
	// waits ends a wait of this connection's INPUT for input room: when
	// the server stops or the connection's stream ends (watchInputStop),
	// and when another connection takes the terminal over (inputwait.go).
	waits inputWaits
	// inputCut: the terminals an INPUT of this connection was dropped
	// for because its stream ended while it waited (noteInputCut); its
	// later INPUT for them is dropped too. Dispatch loop only.
	inputCut map[*term]struct{}
}

// connSendBuffer is the socket send buffer asked for each connection.
// The default (about 200 KiB on Linux) holds three frames of a flood: a
// host reading the socket directly is then woken, and the pumps blocked,
// several times as often as through the bridge, whose pipes add their
// own buffering. The kernel caps it (net.core.wmem_max); what is not in
// flight costs nothing.
const connSendBuffer = 1 << 20

func newConn(s *Server, l link, peer *net.UnixConn) *conn {
	if sl, ok := l.(*sockLink); ok {
		sl.SetWriteBuffer(connSendBuffer) // best effort
	}
	c := &conn{s: s, l: l, peer: peer}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// write sends one frame, given as the slices it is made of, and returns
// once it was written (the slices may be reused then) or the connection
// broke. A failed write breaks the connection for writing; its reader
// ends soon after, and that detaches its terminals.
func (c *conn) write(frame ...[]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		return
	}
	c.queue = append(c.queue, frame...)
	mine := c.taken + 1 // the batch that will carry this frame
	for c.written < mine && !c.broken {
		if c.busy {
			c.cond.Wait()
			continue
		}
		// Nobody writes: this sender writes the batch, its own frame
		// and whatever others queued, and then hands the next batch
		// to one of those who queued meanwhile (each waits for its
		// own), so that no pump is kept from its terminal for long.
		c.busy = true
		b := c.queue
		c.queue, c.spare = c.spare[:0], nil
		c.taken++
		n := c.taken
		c.mu.Unlock()
		all := b
		err := c.l.writeBatch(&b)
		c.mu.Lock()
		clear(all)
		c.spare = all[:0]
		c.busy = false
		c.written = n
		if err != nil {
			c.broken, c.werr = true, err
			c.queue = nil
			c.l.stopReading() // wake the dispatch loop so the terminals are detached
		}
		c.cond.Broadcast()
	}
}

// abort shuts a connection that stopped reading down: the write in
// progress fails at once, which breaks the connection; its reader then
// ends and its terminals are detached.
func (c *conn) abort(why string) {
	c.mu.Lock()
	if c.shut == "" {
		c.shut, c.hung = why, true
	}
	c.mu.Unlock()
	c.l.stopWriting()
	c.l.stopReading()
}

// cut ends the connection at once for a reason of the server's own (a
// stop) while a write to it is stuck: as abort, but not as the host's
// doing, so a bridge that handed the host over exits 0, as after any
// STOP (ending).
func (c *conn) cut(why string) {
	c.setShut(why)
	c.l.stopWriting()
	c.l.stopReading()
}

// close ends the connection from our side, for why.
func (c *conn) close(why string) {
	c.setShut(why)
	c.l.Close()
}

func (c *conn) setShut(why string) {
	c.mu.Lock()
	if c.shut == "" {
		c.shut = why
	}
	c.mu.Unlock()
}

// ending says how the connection ended, given the error that ended its
// read loop, as the exit status and reason of a bridge: 0 when the host
// closed its end (or the server ended the connection for a reason of its
// own, as a bridge that copies exits 0 when the server hangs up), 1 when
// the host stopped reading or sent what is not a frame.
func (c *conn) ending(rerr error) (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.hung:
		return 1, fmt.Sprintf("to the host: it stopped reading: %s", c.shut)
	case c.shut != "":
		return 0, c.shut
	case c.werr != nil:
		return 1, fmt.Sprintf("to the host: %v", c.werr)
	case rerr == nil || rerr == io.EOF:
		return 0, "the host closed stdin"
	}
	return 1, fmt.Sprintf("from the host: %v", rerr)
}

func (c *conn) writeJSON(typ proto.Type, v any) {
	c.write(checkedFrame("", typ, v))
}

func (c *conn) errorf(id, format string, args ...any) {
	c.writeJSON(proto.TypeError, proto.Error{TerminalID: id, Message: fmt.Sprintf(format, args...)})
}

func (s *Server) serveConn(nc *net.UnixConn) {
	sl := newSockLink(nc)
	c := newConn(s, sl, nc)
	if !s.addConn(c) {
		sl.Close()
		return
	}
	host, _, _ := s.readFrames(c)
	s.endConn(c)
	if host == nil {
		sl.Close()
		return
	}
	s.serveHandedOff(c, host)
}

// addConn registers c, unless the server is stopping or upgrading.
func (s *Server) addConn(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A connection accepted just before an upgrade closed the listener
	// is not served: it would reach terminals that are frozen, or open
	// one that is not handed over. Its peer sees it end, as every other
	// connection's does, and connects again.
	if s.stopping || s.relisten != nil {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// endConn lets c's terminals go on without it and forgets c.
func (s *Server) endConn(c *conn) {
	s.flushControl(c)
	s.detachAll(c)
	s.mu.Lock()
	delete(s.conns, c)
	s.connGone.Broadcast()
	s.mu.Unlock()
}

// readFrames serves c's frames until its stream ends, and says how (see
// conn.ending). If a bridge handed its host's descriptors over on c, it
// stops there and returns the connection made of them instead.
func (s *Server) readFrames(c *conn) (host *conn, code int, why string) {
	r := proto.NewReader(c.l)
	c.ahead = s.newLookahead(c, r)
	done := make(chan struct{})
	defer close(done)
	s.watchInputStop(c, done)
	var rerr error
	for first := true; ; first = false {
		res := c.ahead.Next()
		f, err := res.Frame, res.Err
		if err != nil {
			rerr = err
			c.mu.Lock()
			shut := c.shut
			c.mu.Unlock()
			if err != io.EOF && shut == "" {
				s.logf("connection: reading frames: %v", err)
			}
			break
		}
		if f.Type == proto.TypeStop {
			if _, err := proto.Decode(f); err != nil {
				s.malformed(c, err.(*proto.DecodeError))
				continue
			}
			s.Stop()
			break
		}
		if f.Type == proto.TypeUpgrade {
			// Carried out here, with this connection's reading paused:
			// it returns only if the upgrade was refused or failed.
			s.upgrade(c, f.Body)
			continue
		}
		if sl, ok := c.l.(*sockLink); ok && first && f.Type == proto.TypeHello && r.Buffered() == 0 {
			// A bridge's HANDOFF may come next (see sockLink).
			sl.recvNext = true
		}
		if f.Type == proto.TypeHandoff {
			if host := s.handoff(c); host != nil {
				return host, 0, ""
			}
			continue
		}
		s.dispatch(c, f)
	}
	code, why = c.ending(rerr)
	return nil, code, why
}

// watchInputStop ends every wait of c's INPUT for input room once the
// server stops or c's stream ends. A host
// that goes away while its INPUT waits for a child that reads nothing
// (one whose output waits for the credit only that host would grant)
// must not keep its connection, and so its terminals, held for ever: the
// rest of that INPUT is dropped, as what a gone host sends is, and the
// loop goes on to the end of the stream, which detaches them. done ends
// the watch when the loop is over.
func (s *Server) watchInputStop(c *conn, done <-chan struct{}) {
	go func() {
		select {
		case <-s.stopped:
		case <-c.ahead.Ended():
		case <-done:
			return
		}
		c.waits.end()
	}()
}

// controlFlushBound bounds how long a connection whose input ended waits
// for the frames queued for it (flushControl).
const controlFlushBound = time.Second

// flushControl gives the frames the terminals queued for c up to
// controlFlushBound to be written before c is let go: an OPENED for an
// OPEN read just before c's input ended, an ERROR. A host that writes
// its OPENs and closes its input at once so reads an answer to each, as
// from the plain sidecar (the terminals stay, detached). Nothing waits
// for a connection that is broken.
func (s *Server) flushControl(c *conn) {
	deadline := time.Now().Add(controlFlushBound)
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.owesLocked(c) && !c.isBroken() {
			t.flushWaits++
			wake := time.AfterFunc(time.Until(deadline), func() {
				t.mu.Lock()
				t.cond.Broadcast()
				t.mu.Unlock()
			})
			for t.owesLocked(c) && !c.isBroken() && time.Now().Before(deadline) {
				t.cond.Wait()
			}
			wake.Stop()
			t.flushWaits--
		}
		t.mu.Unlock()
	}
}

// detachAll lets every terminal c holds go on without it.
func (s *Server) detachAll(c *conn) {
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.holder == c {
			t.holder = nil
			s.orphanedLocked(t)
			if t.exitedLocked() && t.end == unread {
				s.keepExitedLocked(t, s.opts.KeepExited)
			}
		}
		t.removeViewerLocked(c, "")
		// Frames queued for c have nowhere to go.
		kept := t.ctl[:0]
		for _, f := range t.ctl {
			if f.to != c {
				kept = append(kept, f)
			}
		}
		t.ctl = kept
		t.broadcastLocked()
		t.mu.Unlock()
	}
}

func (s *Server) snapshotTerms() []*term {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*term, 0, len(s.terms))
	for _, t := range s.terms {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (s *Server) lookup(id string) *term {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.terms[id]
}

// remove frees t's id and journal quota; its pump ends.
func (s *Server) remove(t *term) {
	s.mu.Lock()
	if s.terms[t.id] == t {
		delete(s.terms, t.id)
		s.reserved -= int64(t.quota)
	}
	s.mu.Unlock()
	t.mu.Lock()
	t.goneLocked()
	t.mu.Unlock()
}

// keepExited drops t, which exited while detached, once KeepExited has
// passed without a host reading its end. The clock starts again at every
// detach: only the latest timer of a terminal may drop it.
func (s *Server) keepExited(t *term) { s.keepExitedFor(t, s.opts.KeepExited) }

func (s *Server) keepExitedFor(t *term, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.keepExitedLocked(t, d)
}

// keepExitedLocked is keepExitedFor with t.mu held: a detach starts the
// clock before its DETACHED can be read, so a LIST that follows the
// DETACHED shows the clock running (dropInMs).
func (s *Server) keepExitedLocked(t *term, d time.Duration) {
	if s.isStopped() {
		return // the connections that end after Stop detach from no one's terminal
	}
	var gen int
	gen = t.startKeepClockLocked(d, func() {
		t.mu.Lock()
		drop := t.keepGen == gen && t.holder == nil && t.end == unread
		t.mu.Unlock()
		if drop {
			s.logf("terminal %q: exited and unread for %v: dropped", t.id, d)
			s.remove(t)
		}
	})
}

// keepFinished keeps t, whose EXIT was sent, for KeepExited: a host that
// died before reading the EXIT attaches again and gets the rest.
func (s *Server) keepFinished(t *term) { s.keepFinishedFor(t, s.opts.KeepExited) }

// keepFinishedFor is keepFinished after d; it is called without t.mu.
func (s *Server) keepFinishedFor(t *term, d time.Duration) {
	if s.isStopped() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var gen int
	gen = t.startKeepClockLocked(d, func() {
		t.mu.Lock()
		drop := t.end == exitWritten && t.keepGen == gen
		t.mu.Unlock()
		if drop {
			s.remove(t)
		}
	})
}

// startKeepClockLocked starts t's keep clock again: fire runs after d,
// unless a later clock replaces this one (timers started before it no
// longer count, and the latest is stopped) or the server stops. It
// returns the clock's generation.
func (t *term) startKeepClockLocked(d time.Duration, fire func()) int {
	t.keepGen++
	t.keepAt = time.Now().Add(d)
	if t.keeper != nil {
		t.keeper.Stop()
	}
	t.keeper = time.AfterFunc(d, fire)
	return t.keepGen
}

// finishedTail is how much of a finished terminal's journal is kept for
// a holder that grants no credit (so acknowledges nothing): what the
// connection's buffers may still hold, unread, when its EXIT was written
// (the socket's send buffer, which the kernel doubles, and a bridge's
// pipes). A host that died before reading them attaches again and finds
// them; one that lost more gets a SNAPSHOT. The rest of the journal, and
// its quota, is given back.
const finishedTail = 2*connSendBuffer + 256<<10

// finishedFromLocked is the offset from which a finished terminal's
// journal is kept: what its holder did not acknowledge when the holder
// grants credit (CREDIT is for bytes consumed, so the host has the rest
// for good), else the last finishedTail bytes.
func (t *term) finishedFromLocked() uint64 {
	from := t.j.end - min(t.j.end, finishedTail)
	if t.credit.Limited() && !t.dead {
		// (A dead terminal keeps its tail whatever was read of it:
		// a REVIVE repaints its screen from it.)
		from = min(t.acked, t.j.end)
	}
	return max(from, t.j.start)
}

// shrinkFinished cuts t's journal to the tail a late host may still need
// once its EXIT was written, and lets go of what only a running terminal
// needs; again after each CREDIT that acknowledges more of that tail.
func (s *Server) shrinkFinished(t *term) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.end != exitWritten || s.terms[t.id] != t || t.pinned || t.life == engine.Gone {
		return
	}
	keep := t.finishedFromLocked()
	if floor, ok := t.pinFloorLocked(); ok {
		keep = min(keep, floor) // a SNAPSHOT's tail, not rendered yet
	}
	if keep > t.j.start {
		t.j.evict(int(keep - t.j.start))
		t.views.noteLossLocked(t.j.start)
	}
	// Its end reached a host: a crash from now on has nothing to keep.
	// But not at a stop (SIGTERM at a shutdown, say): what the stop
	// killed stays on disk, with its exit, for a REVIVE after it. Nor
	// for a dead terminal (revive.go): its files are all that is left
	// of it, to be attached again and revived after another crash too,
	// until --keep-exited, an OPEN of its id or a REVIVE.
	if !s.dropping.Load() && !t.dead {
		t.disk.remove()
	}
	if q := max(t.j.size, 1); q < t.quota {
		s.reserved -= int64(t.quota - q)
		t.quota, t.j.limit = q, q
	}
	if _, pinned := t.pinFloorLocked(); !pinned && t.readEnded {
		// Nothing reads the journal without the lock, nor writes to
		// it: what is kept moves to storage of its size.
		t.j.compact()
		t.vt.Forget(t.j.start)
		t.vt.Trim()
		t.answers.release()
	}
}

// makeRoomLocked drops finished terminals (EXIT sent), oldest id first,
// until need more journal bytes fit in the total, and the one with id.
// Called with s.mu held; reports whether need fits now.
func (s *Server) makeRoomLocked(id string, need int64) bool {
	if old := s.terms[id]; old != nil && (old.isFinished() || old.dead) {
		// A dead terminal (revive.go) gives its id to a new OPEN.
		s.dropLocked(old)
	}
	if s.reserved+need <= s.opts.Total {
		return true
	}
	for _, t := range s.terms {
		// Not a dead terminal, whose EXIT a host read: it stays, as
		// an unread one does (its journal is reserved either way).
		if t.isFinished() && !t.dead {
			s.dropLocked(t)
			if s.reserved+need <= s.opts.Total {
				return true
			}
		}
	}
	return false
}

func (s *Server) dropLocked(t *term) {
	delete(s.terms, t.id)
	s.reserved -= int64(t.quota)
	t.mu.Lock()
	t.goneLocked()
	t.mu.Unlock()
}

// goneLocked marks t removed from the server (once; a keep timer may
// come after a drop that made room); its pump ends.
func (t *term) goneLocked() {
	if t.life != engine.Gone {
		t.enterLocked(engine.Gone)
		t.orphan.stop()
		t.broadcastLocked()
		t.views.wakeAllLocked()
		t.disk.remove()
	}
}

func (t *term) isFinished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.end == exitWritten
}

// Shutdown stops the server (see Stop) and closes its listener, which
// ends Serve.
func (s *Server) Shutdown() {
	s.Stop()
	s.mu.Lock()
	ln, w := s.ln, s.relisten
	s.relisten = nil
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	if w != nil {
		// Serve waits for an upgrade's outcome: it is to end instead.
		select {
		case w <- nil:
		default:
		}
	}
}

// Stop kills every terminal, waits (bounded) for their output to end,
// and closes the listener and every connection. A second call waits
// for the first to end.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopping = true
		s.mu.Unlock()
		close(s.stopped)
		s.dropping.Store(true)
		terms := s.snapshotTerms()
		for _, t := range terms {
			t.mu.Lock()
			// As the plain sidecar's shutdown does, every credit gate
			// is lifted: a holder out of credit would otherwise never
			// get the rest of the output, nor the EXIT behind it.
			if t.holder != nil && t.credit.Limited() {
				t.credit.Lift()
			}
			t.broadcastLocked() // the reader may evict everything now
			t.mu.Unlock()
			t.kill()
		}
		// Wait (bounded) until every child is reaped, so that none is
		// left behind as a zombie for whoever inherits it. The bound is
		// a channel that stays closed: one that delivers a single value
		// would end the wait for the first terminal still running at
		// the bound and leave the next one's waiting for ever.
		bound := time.Now().Add(10 * time.Second)
		expired := make(chan struct{})
		timer := time.AfterFunc(time.Until(bound), func() { close(expired) })
		defer timer.Stop()
		for _, t := range terms {
			t.awaitReaped(expired)
		}
		// And until each holder was written its terminal's EXIT, which
		// the pump writes once the output before it is out: closing the
		// connections first would cut it off, and the host would learn
		// of the end only as a lost connection.
		flushBy := time.Now().Add(stopFlushBound)
		if flushBy.After(bound) {
			flushBy = bound
		}
		for _, t := range terms {
			t.awaitExitWritten(flushBy)
		}
		// The listener before the connections: a client that connects
		// once --stop has returned (its connection closed) finds no
		// server, where it found one that hung up on it. (Closing it
		// removes the socket; Serve returns.)
		s.mu.Lock()
		if s.ln != nil {
			s.ln.Close()
		}
		for c := range s.conns {
			c.close("the server stopped")
		}
		s.mu.Unlock()
		// Nobody will come for the terminals: their pumps and viewers
		// end (a process that goes on after Stop, as a test's, keeps
		// none of them, nor their journals), and the files of
		// --journal-dir stay for the next server.
		for _, t := range terms {
			t.mu.Lock()
			if t.life == engine.Reaped {
				t.enterLocked(engine.Gone)
				t.orphan.stop()
				t.broadcastLocked()
				t.views.wakeAllLocked()
			}
			if t.keeper != nil {
				t.keeper.Stop()
			}
			t.mu.Unlock()
		}
		s.closeWatchdog()
	})
}
