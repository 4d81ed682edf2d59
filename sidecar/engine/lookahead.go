package engine

import (
	"sync"

	"github.com/ptyplex/ptyplex/proto"
)

// While a connection's dispatch loop waits for room in a terminal's input
// queue (a child that does not read its INPUT), the frames behind it stay
// unread. Among them may be the CREDIT that would let that child go on: a
// child that echoes (cat, a shell) stops reading its input as soon as its
// own output waits for credit, and its host grants credit only as it
// reads that output, in frames it writes after its INPUT. So during such
// a wait a reader goes on reading, up to LookaheadBytes: a CREDIT the
// server may take now is applied at once (credit concerns output only, so
// taking it before INPUT sent ahead of it changes nothing the child
// sees), and every other frame is kept, in order, for the dispatch loop,
// which takes the kept frames before it reads again. A PING is kept as
// well: its PONG says that every frame before it was dispatched, which a
// host that paces its paste counts on; but a PING that asks for its PONG
// at once ("now", a keepalive's) is answered as it is read, or a host
// whose paste waits for a child that reads nothing would take the
// silence for a dead connection. Past the bound the reader stops:
// the back-pressure as before. A host that pastes without bound ahead of
// its CREDIT can still outrun any bound (PROTOCOL.md, INPUT); one that
// sends its CREDIT within a piece of its paste no longer waits for ever.
// Both servers read their hosts' frames through a Lookahead.

// LookaheadBytes bounds the frame bodies kept while the dispatch loop
// waits.
const LookaheadBytes = 1 << 20

// Read is one frame read from the host, or why reading ended.
type Read struct {
	Frame proto.Frame
	Err   error
	// Ahead: the look-ahead's goroutine read it, during a wait, and
	// LookaheadHooks.Seen has seen it.
	Ahead bool
}

// LookaheadHooks is what a server tells its Lookahead.
type LookaheadHooks struct {
	// Read reads the next frame. One goroutine at a time calls it.
	Read func() (proto.Frame, error)
	// Seen, if set, is called with each frame the look-ahead's goroutine
	// reads, as it reads it (the plain sidecar's tap).
	Seen func(proto.Frame)
	// Grant applies the CREDIT f, read during a wait after the frames in
	// before (kept, not dispatched yet), and reports whether it did;
	// one it does not apply (malformed, for a terminal that does not
	// exist, or one that a frame in before may change the meaning of)
	// is kept and dispatched in its turn. It is called with the
	// Lookahead's lock held, which is taken under no other lock.
	Grant func(f proto.Frame, before []Read) bool
	// Answer, if set, answers the PING f, read during a wait, at once if
	// its body asks for that (proto.PingNow), and reports whether it did:
	// an answered PING is not kept.
	Answer func(f proto.Frame) bool
	// Last, if set, reports whether nothing may be read past r until the
	// dispatch loop has acted on it (the server is shutting down; a
	// frame that changes what the connection is): the reader keeps r and
	// stops.
	Last func(r Read) bool
}

// Lookahead owns a connection's frame reader. The dispatch loop reads
// through it (Next); while the loop waits for input room (between
// WaitBegins and WaitEnds), a goroutine reads on.
type Lookahead struct {
	h LookaheadHooks

	mu       sync.Mutex
	changed  *sync.Cond // on mu: kept changed, the wait ended, the reader stopped
	kept     []Read     // read during a wait, for the dispatch loop, in order
	keptSize int        // body bytes in kept
	reading  bool       // a reader goroutine holds the reader
	waiting  bool       // the dispatch loop waits for input room
	// ended is closed once a read failed (the host's stream ended):
	// whoever reads it, the reader goroutine during a wait or the
	// dispatch loop itself.
	ended   chan struct{}
	endOnce sync.Once
}

// NewLookahead returns the Lookahead of a connection.
func NewLookahead(h LookaheadHooks) *Lookahead {
	la := &Lookahead{h: h, ended: make(chan struct{})}
	la.changed = sync.NewCond(&la.mu)
	return la
}

// Next is the dispatch loop's next frame: one kept during a wait, the one
// a reader goroutine is reading, or one read now.
func (la *Lookahead) Next() Read {
	la.mu.Lock()
	for len(la.kept) == 0 && la.reading {
		la.changed.Wait()
	}
	if len(la.kept) > 0 {
		res := la.kept[0]
		la.kept[0] = Read{}
		la.kept = la.kept[1:]
		la.keptSize -= len(res.Frame.Body)
		la.changed.Broadcast()
		la.mu.Unlock()
		return res
	}
	la.mu.Unlock()
	f, err := la.h.Read()
	if err != nil {
		la.end()
	}
	return Read{Frame: f, Err: err}
}

// Ended is closed once a read failed: the host's stream ended (or broke)
// and nothing more will come. A wait for input room ends there too: the
// host that would have made room by its CREDITs is gone, and a dispatch
// loop that went on waiting for a child that waits for that host would
// wait for ever, its connection never let go.
func (la *Lookahead) Ended() <-chan struct{} { return la.ended }

func (la *Lookahead) end() { la.endOnce.Do(func() { close(la.ended) }) }

// WaitBegins is called as the dispatch loop starts to wait for input
// room: a reader goroutine reads on meanwhile (one still running from an
// earlier wait goes on).
func (la *Lookahead) WaitBegins() {
	la.mu.Lock()
	defer la.mu.Unlock()
	la.waiting = true
	la.applyKeptCreditsLocked()
	if !la.reading {
		la.reading = true
		go la.read()
	}
}

// WaitEnds is called when the dispatch loop has room again. The reader
// goroutine keeps the frame it is reading, the next after the others, and
// stops. No Grant runs once it has returned.
func (la *Lookahead) WaitEnds() {
	la.mu.Lock()
	la.waiting = false
	la.changed.Broadcast()
	la.mu.Unlock()
}

// applyKeptCreditsLocked applies, as a wait begins, the CREDITs among
// the kept frames: those read while the loop did not wait (the frame the
// reader was reading as the last wait ended, and any after it) would
// otherwise wait behind the INPUT the loop now waits with, for ever if
// that INPUT's child waits for the credit. Called with la.mu held.
func (la *Lookahead) applyKeptCreditsLocked() {
	kept := la.kept[:0]
	for i, k := range la.kept {
		if k.Err == nil && k.Frame.Type == proto.TypeCredit && la.h.Grant(k.Frame, la.kept[:i]) {
			la.keptSize -= len(k.Frame.Body)
			continue
		}
		kept = append(kept, k)
	}
	clear(la.kept[len(kept):])
	la.kept = kept
}

// read is the reader goroutine of a wait.
func (la *Lookahead) read() {
	for {
		f, err := la.h.Read()
		res := Read{Frame: f, Err: err}
		if err != nil {
			la.end()
		}
		if err == nil && la.h.Seen != nil {
			la.h.Seen(f)
			res.Ahead = true
		}
		if err == nil && f.Type == proto.TypePing && la.h.Answer != nil && la.h.Answer(f) {
			continue
		}
		la.mu.Lock()
		// Whether to apply a CREDIT now and, if not, keeping it are one
		// step under mu: a wait that began between the two would have
		// applied the kept CREDITs before this one was kept, and it
		// would then wait behind the INPUT that waits for it, for ever.
		if err == nil && f.Type == proto.TypeCredit && la.creditNowLocked(f) {
			la.mu.Unlock()
			continue
		}
		la.kept = append(la.kept, res)
		la.keptSize += len(f.Body)
		la.changed.Broadcast()
		if !la.waiting || err != nil || (la.h.Last != nil && la.h.Last(res)) {
			la.reading = false
			la.mu.Unlock()
			return
		}
		for la.waiting && la.keptSize >= LookaheadBytes {
			la.changed.Wait()
		}
		la.mu.Unlock()
	}
}

// creditNowLocked applies a CREDIT read while the dispatch loop waits
// and reports whether it did: by Grant's rule, and only while the loop
// still waits (after, the CREDIT takes its turn). Under la.mu.
func (la *Lookahead) creditNowLocked(f proto.Frame) bool {
	return la.waiting && la.h.Grant(f, la.kept)
}

// Names reports whether a frame among before, of one of the types given,
// names terminal id: a CREDIT behind such a frame (an OPEN of its id, an
// ATTACH) is about the terminal as that frame leaves it, and waits its
// turn.
func Names(before []Read, id string, types ...proto.Type) bool {
	for _, k := range before {
		if k.Err != nil {
			continue
		}
		for _, typ := range types {
			if k.Frame.Type == typ && proto.RecoverID(k.Frame.Body) == id {
				return true
			}
		}
	}
	return false
}
