//go:build unix

package persist

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/vtstate"
)

// Answers while detached. Programs ask their terminal things and wait for
// the reply: vim asks for DA2, the cursor position and the background
// colour as it starts, fish for DA1, many TUIs for XTVERSION. While a host
// holds the terminal, its emulator sees the query in the output and its
// reply comes back as INPUT. While none does, nothing would answer, and
// the program stalls until its own timeout (or for ever). So, with no
// holder, the server answers what a real xterm answers, writing the reply
// to the PTY as the terminal would:
//
//   - DA1 (CSI c), DA2 (CSI > c), DSR 5 (CSI 5 n), XTVERSION (CSI > q) and
//     the OSC 4/10/11/12 colour queries need no state of the screen: a
//     small screen.Screen per terminal (idents) answers them, the one table
//     of answers the session daemon uses too. It also sees the colours a
//     program sets (OSC 4/10/11/12, and their resets), held or not, and
//     the colours the last holder's emulator reported: a host's replies
//     to colour queries pass through INPUT in the form of a colour set
//     (OSC 11;rgb:... ), and idents takes them as such; a colour the
//     program resets goes back to the reported one. Colours nobody set
//     or reported answer the screen package's defaults (xterm's palette,
//     white on black).
//   - XTGETTCAP (DCS + q names ST) asks for the terminal's name and
//     colours only: idents answers it too.
//   - DSR 6 (cursor position, CSI 6 n and CSI ? 6 n), DECRQM
//     (CSI [?] Ps $ p) and DECRQSS (DCS $ q setting ST: the pen, the
//     margins, the cursor style) depend on what the program drew: an answerState
//     answers them (renderedState: a screen rendered from the journal's
//     tail when the first such query comes, then fed what came after).
//
// Cost: the reader calls read after each PTY read. With a holder it looks
// for ESC ] (an OSC, which may set a colour) with bytes.Index and does
// nothing more for a read without one; without a holder it looks for ESC
// with bytes.IndexByte and does nothing more for a read without one. A
// query that a read ends in the middle of is kept (pending) and completed
// by the next read; if a holder attached in between, the query was sent to
// it whole (the replay starts at an offset the host had reached), and its
// emulator answers: the server drops its half. A host that attaches at an
// offset before queries the server answered is replayed them and answers
// again: input takes those second replies out of its INPUT. The reader
// owns pending and state; mu guards the rest, which INPUT and ATTACH (in
// the connection's dispatch loop) use too. Lock order: t.mu before mu.
type answerer struct {
	// pending is the start of an escape sequence the last read ended in,
	// read while detached; pendingAt is its offset in the output.
	pending   []byte
	pendingAt uint64
	// state answers DSR 6 and DECRQM; nil until the first of them.
	state answerState

	mu     sync.Mutex
	idents *screen.Screen // nil until a query or a colour needs it
	// reported are the colours the holders' emulators reported, by
	// their key (colourSpecs), each as its spec: what a colour is once the program
	// resets it (OSC 104, 110-112), as in the emulator that reported
	// it. programSet are the colours the program set and has not reset,
	// each as the spec it set: a report of one of those is the program's
	// colour, not the emulator's own.
	reported   map[string]string
	programSet map[string]string
	// answered are the replies given while detached (replyKey), by the
	// offset where their query began; expect, the kinds of those a
	// holder's emulator will give again (its replay holds the query),
	// until expectUntil (input).
	answered    []given
	expect      []string
	expectUntil time.Time
	heldFrom    uint64 // the offset the latest ATTACH replayed from

	outMu   sync.Mutex
	out     []byte // replies not yet handed to the input queue
	sending bool   // a goroutine is handing out to the input queue
}

// given is a reply the server gave: its kind, and the offset at which
// the query it answered began.
type given struct {
	at  uint64
	key string
}

// answerState is where the answers that depend on what the program drew
// come from. renderedState renders them from the journal on demand; a
// tracker of modes kept up to date as output flows could replace it.
type answerState interface {
	// reply is what the terminal answers to query, a DSR 6 or DECRQM
	// whose first byte is at offset at of t's output. Called by t's
	// reader only, without t.mu.
	reply(t *term, query []byte, at uint64) []byte
	// release frees what the state holds: a holder answers for now.
	release()
}

const (
	// maxQuery bounds an escape sequence kept across reads: a colour
	// query is short, and anything longer is not answered.
	maxQuery = 512
	// stateMaxInput bounds the journal's tail a renderedState parses when
	// it starts (about a millisecond's parse): enough to hold a screen's
	// repaint and the modes set at its start.
	stateMaxInput = 256 << 10
	// maxAnswered bounds the replies remembered for a replay.
	maxAnswered = 256
	// replayAnswers is how long after an ATTACH the holder's replies to
	// replayed queries are expected: a replay takes a second or less,
	// and its emulator answers as it parses it.
	replayAnswers = 5 * time.Second
)

// identVersion is what XTVERSION answers.
var identVersion = "ptyplex(" + version.Version + ")"

// seqKind says who answers an escape sequence.
type seqKind uint8

const (
	seqOther seqKind = iota // nobody here: not a query we answer
	seqIdent                // idents: DA1, DA2, DSR 5, XTVERSION, XTGETTCAP, colours
	seqState                // the answerState: DSR 6, DECRQM, DECRQSS
)

// read is the reader's hook: p is what a PTY read just put in the journal
// at offset at, and detached says whether no host held the terminal when
// it was committed.
func (a *answerer) read(t *term, p []byte, at uint64, detached bool) {
	if !detached {
		// The holder answers, the whole query included (see above).
		if a.state != nil {
			a.state.release()
			a.state = nil
		}
		// A colour the program sets meanwhile is still its colour once
		// the holder is gone: OSCs are rare in output, so one search per
		// read finds the reads that may hold one, and only those are
		// scanned (a sequence a read ends in is kept, as below, in case
		// it is one).
		if len(a.pending) == 0 && bytes.Index(p, oscIntro) < 0 && (len(p) == 0 || p[len(p)-1] != 0x1b) {
			return
		}
		a.scan(p, at, func(kind seqKind, seq []byte, _ uint64) {
			if kind == seqIdent && seq[1] == ']' {
				a.mu.Lock()
				a.programColourLocked(seq)
				a.mu.Unlock()
			}
		})
		return
	}
	if len(a.pending) == 0 && bytes.IndexByte(p, 0x1b) < 0 {
		return // the common case: nothing more per byte
	}
	a.scan(p, at, func(kind seqKind, seq []byte, at uint64) { a.answer(t, kind, seq, at) })
}

// scan finds the queries in p, output at offset at, completing the one
// pending from the previous read, and calls found for each.
func (a *answerer) scan(p []byte, at uint64, found func(kind seqKind, seq []byte, at uint64)) {
	if len(a.pending) > 0 {
		old := len(a.pending)
		take := min(len(p), maxQuery-old)
		a.pending = append(a.pending, p[:take]...)
		kind, n, complete := scanSeq(a.pending)
		switch {
		case !complete && take == len(p):
			return // still incomplete: the next read may end it
		case !complete:
			n = old + take // too long to be a query we answer
		case kind != seqOther:
			found(kind, a.pending[:n], a.pendingAt)
		}
		// Skip what p holds of the sequence that began in pending (none
		// of it if that ended within pending: its ESC alone, skipped).
		p, at = p[max(n-old, 0):], at+uint64(max(n-old, 0))
		a.pending = a.pending[:0]
	}
	for {
		i := bytes.IndexByte(p, 0x1b)
		if i < 0 {
			return
		}
		p, at = p[i:], at+uint64(i)
		kind, n, complete := scanSeq(p)
		if !complete {
			a.pending, a.pendingAt = append(a.pending[:0], p...), at
			return
		}
		if kind != seqOther {
			found(kind, p[:n], at)
		}
		p, at = p[n:], at+uint64(n)
	}
}

// answer writes the terminal's reply to seq, at offset at, to the PTY.
// A host may have attached since the read was committed: if its replay
// holds the query, its emulator answers, and the server does not. The
// check and the note of the reply are made under t.mu, as an ATTACH
// (attached) is, so that one of the two answers and only one.
func (a *answerer) answer(t *term, kind seqKind, seq []byte, at uint64) {
	var reply []byte
	switch kind {
	case seqIdent:
		a.mu.Lock()
		if seq[1] == ']' {
			reply = a.programColourLocked(seq)
		} else {
			sc := a.identsLocked()
			sc.Write(seq)
			reply = sc.TakeReplies()
		}
		a.mu.Unlock()
	case seqState:
		if a.state == nil {
			a.state = &renderedState{}
		}
		reply = a.state.reply(t, seq, at)
	}
	if len(reply) == 0 {
		return
	}
	t.mu.Lock()
	a.mu.Lock()
	if t.holder == nil || at < a.heldFrom {
		a.noteGivenLocked(reply, at)
		a.send(t, reply)
	}
	a.mu.Unlock()
	t.mu.Unlock()
}

// release lets go of what answering needs, for a terminal whose reader
// has ended (the reader's own fields are free then): no query comes any
// more, and a finished terminal is kept only for its end.
func (a *answerer) release() {
	if a.state != nil {
		a.state.release()
		a.state = nil
	}
	a.pending = nil
	a.mu.Lock()
	a.idents, a.answered, a.expect = nil, nil, nil
	a.reported, a.programSet = nil, nil
	a.mu.Unlock()
}

// identsLocked is the screen that answers the stateless queries.
func (a *answerer) identsLocked() *screen.Screen {
	if a.idents == nil {
		a.idents = screen.New(1, 1, screen.Options{Scrollback: -1, Unhandled: 1, Version: identVersion})
	}
	return a.idents
}

// oscIntro begins every OSC.
var oscIntro = []byte("\x1b]")

// programColourLocked applies a colour OSC of the program's output (a
// query, a set or a reset) to idents and returns idents' reply. A reset
// goes back to the colour the last holder's emulator reported, where one
// did: that emulator's own, which a reset shows there; otherwise to the
// screen's default.
func (a *answerer) programColourLocked(seq []byte) []byte {
	sc := a.identsLocked()
	sc.Write(seq)
	reply := sc.TakeReplies()
	colourSpecs(seq, func(key, spec string) {
		switch spec {
		case "?":
		case "":
			for k := range a.programSet {
				if k == key || key == paletteAll && strings.HasPrefix(k, "4;") {
					delete(a.programSet, k)
				}
			}
			for k, v := range a.reported {
				if k == key || key == paletteAll && strings.HasPrefix(k, "4;") {
					sc.Write(colourSet(k, v))
				}
			}
		default:
			if a.programSet == nil {
				a.programSet = make(map[string]string)
			}
			a.programSet[key] = spec
		}
	})
	sc.TakeReplies()
	return reply
}

// hostColourLocked takes a colour OSC from a holder's INPUT: its
// emulator's reply to a colour query, which has the form of a set. It is
// what queries answer from now on, and, unless the program had set that
// colour itself, the emulator's own colour, to which a reset returns.
func (a *answerer) hostColourLocked(seq []byte) {
	sc := a.identsLocked()
	sc.Write(seq)
	sc.TakeReplies() // a "?" typed by a person is no query to us
	colourSpecs(seq, func(key, spec string) {
		if _, set := a.programSet[key]; spec == "?" || spec == "" || set {
			return
		}
		if a.reported == nil {
			a.reported = make(map[string]string)
		}
		a.reported[key] = spec
	})
}

// coloursHandover is what the answers know of a terminal's colours, for
// a live upgrade: the colours its holders' emulators reported and those
// its program set, each by key (colourSpecs) as its spec. Without it the
// next image answered a colour query while detached with the default,
// not with what the program or its last holder had made it: a program
// that asked after the upgrade (vim's background) saw another terminal.
type coloursHandover struct {
	Reported map[string]string `json:"reported,omitempty"`
	Program  map[string]string `json:"program,omitempty"`
}

// colours describes a's colours for a live upgrade; nil if it knows none.
func (a *answerer) colours() *coloursHandover {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.reported) == 0 && len(a.programSet) == 0 {
		return nil
	}
	return &coloursHandover{Reported: maps.Clone(a.reported), Program: maps.Clone(a.programSet)}
}

// resumeColours takes the colours a live upgrade handed over: the
// reported ones first, then the program's over them, as the program's
// set wins over an emulator's own.
func (a *answerer) resumeColours(c *coloursHandover) {
	if c == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sc := a.identsLocked()
	for _, m := range []map[string]string{c.Reported, c.Program} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			sc.Write(colourSet(k, m[k]))
		}
	}
	sc.TakeReplies()
	a.reported, a.programSet = maps.Clone(c.Reported), maps.Clone(c.Program)
}

// answeredHandover is a reply the answers gave while detached, for a live
// upgrade (given): a host that attaches to the next image at an offset
// before the query is replayed it, and its emulator's second reply must
// be taken out there too, or the program reads it as input.
type answeredHandover struct {
	At  uint64 `json:"at"`
	Key string `json:"key"`
}

// answeredState describes the replies a gave while detached.
func (a *answerer) answeredState() []answeredHandover {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []answeredHandover
	for _, g := range a.answered {
		out = append(out, answeredHandover{At: g.at, Key: g.key})
	}
	return out
}

// resumeAnswered takes the replies a live upgrade handed over.
func (a *answerer) resumeAnswered(replies []answeredHandover) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, g := range replies[max(0, len(replies)-maxAnswered):] {
		a.answered = append(a.answered, given{at: g.At, key: g.Key})
	}
}

// paletteAll is the key of an OSC 104 without arguments: every palette
// entry.
const paletteAll = "4;*"

// colourSpecs calls fn for each colour a complete colour OSC (ESC ], its
// number, its arguments, BEL or ST) names: key "10", "11" or "12" for
// the dynamic colours (further specs of OSC 10 and 11 move on to the
// next, as in xterm), "4;N" for palette entry N (paletteAll for all of
// them), and spec the colour, "?" for a query, "" for a reset (OSC 104,
// 110, 111, 112).
func colourSpecs(seq []byte, fn func(key, spec string)) {
	body := string(seq[2:])
	switch {
	case strings.HasSuffix(body, "\x07"):
		body = body[:len(body)-1]
	case strings.HasSuffix(body, "\x1b\\"):
		body = body[:len(body)-2]
	}
	num, args, _ := strings.Cut(body, ";")
	switch num {
	case "10", "11", "12":
		k := int(num[1] - '0')
		for _, spec := range strings.Split(args, ";") {
			if k > 2 {
				break
			}
			if spec != "" { // no colour, no reset: nothing
				fn("1"+string(rune('0'+k)), spec)
			}
			k++
		}
	case "4":
		f := strings.Split(args, ";")
		for i := 0; i+1 < len(f); i += 2 {
			if idx, err := strconv.Atoi(f[i]); err == nil && idx >= 0 && idx <= 255 && f[i+1] != "" {
				fn("4;"+strconv.Itoa(idx), f[i+1])
			}
		}
	case "110", "111", "112":
		fn("1"+num[2:], "")
	case "104":
		if args == "" {
			fn(paletteAll, "")
			return
		}
		for _, f := range strings.Split(args, ";") {
			if idx, err := strconv.Atoi(f); err == nil && idx >= 0 && idx <= 255 {
				fn("4;"+strconv.Itoa(idx), "")
			}
		}
	}
}

// colourSet is the OSC that sets the colour key to spec.
func colourSet(key, spec string) []byte {
	if strings.HasPrefix(key, "4;") {
		return []byte("\x1b]4;" + key[2:] + ";" + spec + "\x07")
	}
	return []byte("\x1b]" + key + ";" + spec + "\x07")
}

// input is the INPUT hook; it returns what goes on to the PTY. A holder's
// emulator that answers a colour query sends the colour in the form of a
// colour set, which idents takes as one, so that queries while detached
// answer what that emulator shows. And a holder that attached at an
// offset before queries the server answered is sent those queries in the
// replay, and its emulator answers them again: those replies, expected
// by their kind (attached), are taken out, so that the program gets one
// answer to each query. Input without ESC costs one IndexByte.
func (a *answerer) input(p []byte) []byte {
	if bytes.IndexByte(p, 0x1b) < 0 {
		return p
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.expect) > 0 && time.Now().After(a.expectUntil) {
		a.expect = nil // the replay's answers are long in, or never came
	}
	var kept []byte // p without the replies taken out, once one was
	last := 0       // p[last:] is not in kept yet
	for i := 0; i < len(p); {
		j := bytes.IndexByte(p[i:], 0x1b)
		if j < 0 {
			break
		}
		i += j
		n := 1
		if kind, m, complete := scanOSC(p[i:]); len(p) > i+1 && p[i+1] == ']' && complete && kind == seqIdent {
			a.hostColourLocked(p[i : i+m])
		}
		if len(a.expect) > 0 {
			if key, m, ok := replyKey(p[i:]); ok {
				n = m
				if k := slices.Index(a.expect, key); k >= 0 {
					a.expect = slices.Delete(a.expect, k, k+1)
					kept = append(kept, p[last:i]...)
					last = i + m
				}
			}
		}
		i += n
	}
	if last == 0 {
		return p
	}
	return append(kept, p[last:]...)
}

// noteGivenLocked records the replies given to a query that began at
// offset at (see input).
func (a *answerer) noteGivenLocked(reply []byte, at uint64) {
	for len(reply) > 0 {
		key, n, ok := replyKey(reply)
		if !ok {
			return // our own replies are all known kinds
		}
		if len(a.answered) == maxAnswered {
			a.answered = append(a.answered[:0], a.answered[1:]...)
		}
		a.answered = append(a.answered, given{at: at, key: key})
		reply = reply[n:]
	}
}

// attached is the ATTACH hook, called with t.mu held, with the offset the holder's replay starts
// at: the answered queries that begin there or later are replayed whole,
// and its emulator will answer them again, within replayAnswers; one cut
// by the offset it cannot answer.
func (a *answerer) attached(from uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expect = a.expect[:0]
	for _, g := range a.answered {
		if g.at >= from {
			a.expect = append(a.expect, g.key)
		}
	}
	a.answered = a.answered[:0]
	a.expectUntil = time.Now().Add(replayAnswers)
	a.heldFrom = from
}

// replyKey reads a terminal's reply at the start of b (b[0] is ESC) and
// says what it answers: the private marker, intermediates and final of a
// CSI reply ("?c" DA1, ">c" DA2, "n" DSR 5, "R" or "?R" a cursor
// position, "$y" or "?$y" DECRQM), "]" and the number of a colour OSC,
// "P>|" for XTVERSION, "P$r" for DECRQSS or "P+r" for XTGETTCAP.
// Emulators differ in the parameters, never in these.
func replyKey(b []byte) (key string, n int, ok bool) {
	if len(b) < 3 {
		return "", 0, false
	}
	switch b[1] {
	case '[':
		i := 2
		var private string
		if b[i] == '?' || b[i] == '>' {
			private = string(b[i])
			i++
		}
		for i < len(b) && i < 64 && (b[i] >= '0' && b[i] <= '9' || b[i] == ';') {
			i++
		}
		inter := ""
		if i < len(b) && b[i] == '$' {
			inter = "$"
			i++
		}
		if i == len(b) {
			return "", 0, false
		}
		key = private + inter + string(b[i])
		switch key {
		case "?c", ">c", "n", "R", "?R", "$y", "?$y":
			return key, i + 1, true
		}
	case ']':
		if kind, m, complete := scanOSC(b); complete && kind == seqIdent {
			i := 2
			for i < m && b[i] >= '0' && b[i] <= '9' {
				i++
			}
			return "]" + string(b[2:i]), m, true
		}
	case 'P':
		// XTVERSION's "P>|"; DECRQSS's and XTGETTCAP's "P$r" and "P+r",
		// after their digit (1 answered, 0 not).
		key := ""
		switch {
		case len(b) > 4 && b[2] == '>' && b[3] == '|':
			key = "P>|"
		case len(b) > 5 && (b[2] == '0' || b[2] == '1') && (b[3] == '$' || b[3] == '+') && b[4] == 'r':
			key = "P" + string(b[3:5])
		default:
			return "", 0, false
		}
		if end := bytes.Index(b[:min(len(b), maxQuery)], []byte("\x1b\\")); end > 0 {
			return key, end + 2, true
		}
	}
	return "", 0, false
}

// send hands reply to the terminal's input queue, in order, from a
// goroutine: the queue may be full (a child that reads nothing), and the
// reader must not wait for it.
func (a *answerer) send(t *term, reply []byte) {
	a.outMu.Lock()
	a.out = append(a.out, reply...)
	start := !a.sending
	a.sending = true
	a.outMu.Unlock()
	if start {
		go a.flush(t)
	}
}

func (a *answerer) flush(t *term) {
	for {
		a.outMu.Lock()
		out := a.out
		a.out = nil
		if len(out) == 0 {
			a.sending = false
			a.outMu.Unlock()
			return
		}
		a.outMu.Unlock()
		t.input.PushWait(out, t.readDone, t.s.stopped, func(why string) {
			t.logf("a reply to the program's query waits: %s", why)
		})
	}
}

// scanSeq reads the escape sequence at the start of b (b[0] is ESC): its
// kind and length, or complete false if b ends before it does and it may
// be one we answer. A sequence that is not one of ours is skipped whole
// if it is a CSI, else by its ESC alone (what follows holds no ESC that
// starts a query, or the next IndexByte finds it).
func scanSeq(b []byte) (kind seqKind, n int, complete bool) {
	if len(b) < 2 {
		return seqOther, 1, false
	}
	switch b[1] {
	case '[':
		return scanCSI(b)
	case ']':
		return scanOSC(b)
	case 'P':
		return scanDCS(b)
	}
	return seqOther, 1, true
}

// scanDCS reads a DCS: ESC P, then, for the two that are queries,
// "$q" (DECRQSS, which the pen, the margins and the cursor style answer:
// the state's) or "+q" (XTGETTCAP, which names only: the idents'), up to
// ST. Any other string is skipped by its ESC, as a query cut short by
// another sequence is.
func scanDCS(b []byte) (seqKind, int, bool) {
	if len(b) < 4 {
		if len(b) == 3 && b[2] != '$' && b[2] != '+' {
			return seqOther, 1, true
		}
		return seqOther, 1, false
	}
	var kind seqKind
	switch {
	case b[2] == '$' && b[3] == 'q':
		kind = seqState
	case b[2] == '+' && b[3] == 'q':
		kind = seqIdent
	default:
		return seqOther, 1, true
	}
	for i := 4; i < len(b) && i < maxQuery; i++ {
		if b[i] != 0x1b {
			continue
		}
		if i+1 == len(b) {
			return seqOther, 1, false
		}
		if b[i+1] == '\\' {
			return kind, i + 2, true
		}
		return seqOther, 1, true
	}
	if len(b) < maxQuery {
		return seqOther, 1, false
	}
	return seqOther, 1, true
}

// scanCSI reads a CSI: ESC [, a private marker, parameters,
// intermediates, a final byte. Most CSIs (SGR, cursor moves) end in a
// final byte no query has, and cost only the loop to it.
func scanCSI(b []byte) (seqKind, int, bool) {
	i := 2
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x3f {
		i++
	}
	if i == len(b) {
		if i >= 32 {
			return seqOther, i, true // too long for a query
		}
		return seqOther, 1, false
	}
	final, n := b[i], i+1
	if final < 0x40 || final > 0x7e {
		return seqOther, 1, true // a control inside: not ours
	}
	switch final {
	case 'c', 'n', 'p', 'q':
	default:
		return seqOther, n, true
	}
	body := b[2:i]
	var private byte
	if len(body) > 0 && body[0] >= '<' && body[0] <= '?' {
		private, body = body[0], body[1:]
	}
	first, params, digits, j := 0, 0, false, 0
	for ; j < len(body); j++ {
		c := body[j]
		if c >= '0' && c <= '9' {
			if params == 0 {
				first = min(first*10+int(c-'0'), 1<<20)
			}
			digits = true
			continue
		}
		if c == ';' || c == ':' {
			params++
			continue
		}
		break
	}
	if digits || params > 0 {
		params++
	}
	inter := body[j:]
	for _, c := range inter {
		if c > 0x2f {
			return seqOther, n, true // a parameter after an intermediate
		}
	}
	switch {
	case len(inter) == 0 && final == 'c' && (private == 0 || private == '>') && first == 0 && params <= 1:
		return seqIdent, n, true // DA1, DA2
	case len(inter) == 0 && final == 'q' && private == '>' && first == 0 && params <= 1:
		return seqIdent, n, true // XTVERSION
	case len(inter) == 0 && final == 'n' && private == 0 && first == 5 && params == 1:
		return seqIdent, n, true // DSR 5: status
	case len(inter) == 0 && final == 'n' && (private == 0 || private == '?') && first == 6 && params == 1:
		return seqState, n, true // DSR 6: cursor position
	case len(inter) == 1 && inter[0] == '$' && final == 'p' && (private == 0 || private == '?') && params == 1:
		return seqState, n, true // DECRQM
	}
	return seqOther, n, true
}

// scanOSC reads an OSC: ESC ], a number, its arguments, BEL or ESC \.
// Only the colour ones are ours (OSC 4, 10, 11, 12 and their resets
// 104, 110, 111, 112), queries and sets alike: a set changes what a later
// query answers.
func scanOSC(b []byte) (seqKind, int, bool) {
	i, num := 2, 0
	for ; i < len(b) && i < 8 && b[i] >= '0' && b[i] <= '9'; i++ {
		num = num*10 + int(b[i]-'0')
	}
	if i == len(b) {
		return seqOther, 1, false
	}
	switch num {
	case 4, 10, 11, 12, 104, 110, 111, 112:
	default:
		return seqOther, 1, true
	}
	if i == 2 || (b[i] != ';' && b[i] != 0x07 && b[i] != 0x1b) {
		return seqOther, 1, true
	}
	for ; i < len(b) && i < maxQuery; i++ {
		switch b[i] {
		case 0x07:
			return seqIdent, i + 1, true
		case 0x1b:
			if i+1 == len(b) {
				return seqOther, 1, false
			}
			if b[i+1] == '\\' {
				return seqIdent, i + 2, true
			}
			return seqOther, 1, true // ended by another sequence: cancelled
		}
	}
	if i == len(b) && i < maxQuery {
		return seqOther, 1, false
	}
	return seqOther, 1, true
}

// renderedState answers from a screen rendered from the journal: at the
// first query, from the tail primed with the modes the tracker had where
// it begins (the cells drawn before it are lost, as in a SNAPSHOT), then fed the bytes between one query and the next, so that a
// program that asks often costs one parse of its output. Released when a
// holder attaches (its screen is no longer needed, and 1,000 idle
// terminals should not each keep one).
type renderedState struct {
	sc         *screen.Screen
	at         uint64 // sc has been fed the output up to here
	cols, rows int
}

func (r *renderedState) reply(t *term, query []byte, at uint64) []byte {
	t.mu.Lock()
	cols, rows := int(t.cols), int(t.rows)
	if cols == 0 || rows == 0 {
		cols, rows = 80, 24
	}
	if at < t.j.start {
		// A tiny journal lost the query's start: no state to render.
		at = t.j.start
	}
	from := r.at
	var prime []byte
	if r.sc == nil || r.at < t.j.start || r.at > at {
		r.sc = screen.New(cols, rows, screen.Options{Scrollback: -1, Unhandled: 1})
		r.cols, r.rows = cols, rows
		from = min(max(t.j.end-min(uint64(stateMaxInput), t.j.end), t.j.start), at)
		// Started at the tracker's checkpoint at or before the tail and
		// primed with its state (as a SNAPSHOT's screen is, modes.go),
		// the screen knows the modes set before the tail too: a DECRQM
		// about a mode the program set long ago gets the true answer.
		if t.vt != nil {
			var st *vtstate.State
			// Reaching back one checkpoint interval further than the
			// tail finds the checkpoint before it, wherever it falls.
			from, _, st = t.snapshotPlanLocked(from, rows, stateMaxInput+checkpointEvery(t.j.limit))
			from = min(from, at)
			if st != nil {
				prime = st.AppendPrime(nil)
			}
		}
	}
	// Only this goroutine (the reader) evicts from the journal: these
	// slices stay valid after the lock is released.
	parts := t.j.appendSlices(nil, from, int(at-from))
	t.mu.Unlock()
	if cols != r.cols || rows != r.rows {
		r.sc.Resize(cols, rows)
		r.cols, r.rows = cols, rows
	}
	r.sc.Write(prime)
	for _, p := range parts {
		r.sc.Write(p)
	}
	r.sc.TakeReplies() // to queries before this one: answered, or a holder's
	r.sc.Write(query)
	r.at = at + uint64(len(query))
	return r.sc.TakeReplies()
}

func (r *renderedState) release() { r.sc = nil }
