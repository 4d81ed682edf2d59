package sidecar

import (
	"sync"

	"github.com/ptyplex/ptyplex/proto"
)

// While the dispatch loop waits for room in a terminal's input queue (a
// child that does not read its INPUT), the frames behind it stay unread.
// Among them may be the CREDIT that would let that child go on: a child
// that echoes (cat, a shell) stops reading its input as soon as its own
// output waits for credit, and its host grants credit only as it reads
// that output, in frames it writes after its INPUT. So during such a wait
// a reader goes on reading, up to lookaheadBytes: a CREDIT for a live
// terminal is applied at once (credit concerns output only, so taking it
// before INPUT sent ahead of it changes nothing the child sees), and every
// other frame is kept, in order, for the dispatch loop, which takes the
// kept frames before it reads again. Past the bound the reader stops:
// the back-pressure as before. A host that pastes without bound ahead of
// its CREDIT can still outrun any bound (PROTOCOL.md, INPUT); one that
// sends its CREDIT within a piece of its paste no longer waits for ever.

// lookaheadBytes bounds the frames kept while the dispatch loop waits.
const lookaheadBytes = 1 << 20

// readResult is one frame read from the host, or why reading ended.
type readResult struct {
	f      proto.Frame
	err    error
	tapped bool // Options.Tap has seen it
}

// lookahead owns the frame reader. The dispatch loop reads through it;
// while the loop waits for input room, a reader goroutine reads on.
type lookahead struct {
	s *Sidecar
	r *proto.Reader

	mu       sync.Mutex
	changed  *sync.Cond   // on mu: kept changed, the wait ended, the reader stopped
	kept     []readResult // read during a wait, for the dispatch loop, in order
	keptSize int          // body bytes in kept
	reading  bool         // a reader goroutine holds r
	waiting  bool         // the dispatch loop waits for input room
}

func newLookahead(s *Sidecar, r *proto.Reader) *lookahead {
	la := &lookahead{s: s, r: r}
	la.changed = sync.NewCond(&la.mu)
	return la
}

// next is the dispatch loop's next frame: one kept during a wait, the one
// a reader goroutine is reading, or one read now.
func (la *lookahead) next() readResult {
	la.mu.Lock()
	for len(la.kept) == 0 && la.reading {
		la.changed.Wait()
	}
	if len(la.kept) > 0 {
		res := la.kept[0]
		la.kept[0] = readResult{}
		la.kept = la.kept[1:]
		la.keptSize -= len(res.f.Body)
		la.changed.Broadcast()
		la.mu.Unlock()
		return res
	}
	la.mu.Unlock()
	f, err := la.r.ReadFrame()
	return readResult{f: f, err: err}
}

// waitBegins is called as the dispatch loop starts to wait for input
// room: a reader goroutine reads on meanwhile (one still running from an
// earlier wait goes on).
func (la *lookahead) waitBegins() {
	la.mu.Lock()
	defer la.mu.Unlock()
	la.waiting = true
	la.applyKeptCreditsLocked()
	if !la.reading {
		la.reading = true
		go la.read()
	}
}

// waitEnds is called when the dispatch loop has room again. The reader
// goroutine keeps the frame it is reading, the next after the others, and
// stops.
func (la *lookahead) waitEnds() {
	la.mu.Lock()
	la.waiting = false
	la.changed.Broadcast()
	la.mu.Unlock()
}

// applyKeptCreditsLocked applies, as a wait begins, the CREDITs among
// the kept frames: those read while the loop did not wait (the frame the
// reader was reading as the last wait ended, and any after it) would
// otherwise wait behind the INPUT the loop now waits with, for ever if
// that INPUT's child waits for the credit. The rule is creditNow's.
// Called with la.mu held.
func (la *lookahead) applyKeptCreditsLocked() {
	kept := la.kept[:0]
	for i, k := range la.kept {
		if k.err == nil && k.f.Type == proto.TypeCredit && la.grantKept(k.f, la.kept[:i]) {
			la.keptSize -= len(k.f.Body)
			continue
		}
		kept = append(kept, k)
	}
	clear(la.kept[len(kept):])
	la.kept = kept
}

// grantKept applies the CREDIT f, read after the frames before, and
// reports whether it did: only for a terminal live now that none of them
// opens (an OPEN of its id among them makes the credit the next
// terminal's). Called with la.mu held.
func (la *lookahead) grantKept(f proto.Frame, before []readResult) bool {
	m, err := proto.ParseCredit(f.Body)
	if err != nil {
		return false
	}
	for _, k := range before {
		if k.err == nil && k.f.Type == proto.TypeOpen && proto.RecoverID(k.f.Body) == m.TerminalID {
			return false
		}
	}
	t := la.s.lookup(m.TerminalID)
	if t == nil {
		return false
	}
	t.gate.Grant(m.Bytes)
	return true
}

// read is the reader goroutine of a wait.
func (la *lookahead) read() {
	for {
		f, err := la.r.ReadFrame()
		res := readResult{f: f, err: err}
		if err == nil && la.s.opts.Tap != nil {
			la.s.opts.Tap(true, proto.AppendFrame(nil, f.Type, f.Body))
			res.tapped = true
		}
		if err == nil && f.Type == proto.TypeCredit && la.creditNow(f) {
			continue
		}
		la.mu.Lock()
		la.kept = append(la.kept, res)
		la.keptSize += len(f.Body)
		la.changed.Broadcast()
		if !la.waiting || err != nil || la.s.isClosing() {
			la.reading = false
			la.mu.Unlock()
			return
		}
		for la.waiting && la.keptSize >= lookaheadBytes {
			la.changed.Wait()
		}
		la.mu.Unlock()
	}
}

// creditNow applies a CREDIT read while the dispatch loop waits and
// reports whether it did: only for a terminal live now that no kept frame
// opens (a kept OPEN of its id makes the credit the next terminal's), and
// only while the loop still waits (after, the CREDIT takes its turn).
// Anything else, a malformed body too, goes to the dispatch loop in order.
func (la *lookahead) creditNow(f proto.Frame) bool {
	la.mu.Lock()
	defer la.mu.Unlock()
	return la.waiting && la.grantKept(f, la.kept)
}
