//go:build unix

package watchdog

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// Run is the watchdog's main: it reads announcements from in until end of
// file, then kills what remains and returns the exit status.
func Run(in io.Reader) int {
	// Only the end of the pipe ends us: not a ^C or a SIGTERM meant for
	// the job we belong to, nor a hangup of the terminal we started on.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	parent := os.Getenv(parentEnv)
	// Nobody of our uid may read our memory or reopen our stdin through
	// /proc/PID/fd/0 (which would let them read or forge lines); a kill
	// is still possible, and the parent then starts a new watchdog.
	if err := ptyhost.ForbidInspection(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: %v\n", err)
	}
	// Only now, not dumpable, do we get the announcement pipe (on in,
	// our standard input; see handoff.go).
	if err := receivePipe(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: %v\n", err)
		return 1
	}
	a := readAnnouncements(&pacedReader{r: in, pace: watchdogPace, now: time.Now, sleep: time.Sleep}, os.Stderr)
	if a.err != nil {
		// Not an end of file: the parent may well be alive, and killing
		// its terminals now would be the very harm we exist to prevent.
		// Without the pipe, its exit is the one sign left to act on.
		pid, _ := strconv.Atoi(parent)
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: reading from pid %s failed (%v); waiting for it to exit instead\n", parent, a.err)
		for pid > 0 && !procwait.Gone(pid, time.Hour) {
		}
	}
	if a.ignored > 0 {
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: ignored %d lines without the token\n", a.ignored)
	}
	if !a.orderly {
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: pid %s ended without shutting down (killed or crashed); terminals still live: %d\n", parent, len(a.live))
	}
	if len(a.live) == 0 {
		return 0
	}
	live := make([]ptyhost.Identity, 0, len(a.live))
	for _, id := range a.live {
		live = append(live, id)
	}
	// Processes may still be forking; kill until a pass finds nobody.
	if ptyhost.KillAllIdentified(live, 50) {
		return 0
	}
	fmt.Fprintf(os.Stderr, "ptyplex watchdog: processes of %s still alive after 50 passes\n", terminals(len(live)))
	return 1
}

// announcements is what the pipe said until it ended.
type announcements struct {
	live    map[int]ptyhost.Identity // by session id
	orderly bool                     // the parent said goodbye
	ignored int                      // lines without the token, overlong ones included
	err     error                    // why reading stopped, if not at end of file
}

// maxLine bounds a line: every line the parent writes fits in one
// write(2) of at most PIPE_BUF bytes, which a pipe never splits, and
// anything longer was written by someone else.
const maxLine = 4096

// readAnnouncements reads the pipe until end of file. The first line holds
// the token; every later line of the parent's starts with it. Lines
// without it, and lines too long to be the parent's, are counted as
// ignored (the first of each kind is reported on logw): someone else who
// opened the pipe wrote them, and only the parent's end of file may end
// the reading.
//
// Someone else's bytes can also come right before one of the parent's
// lines, when they wrote no newline: the parent's line, written at once,
// then ends theirs. So the parent's part is looked for at the end of every
// line that does not start with it.
func readAnnouncements(r io.Reader, logw io.Writer) announcements {
	a := announcements{live: map[int]ptyhost.Identity{}}
	lr := lineReader{br: bufio.NewReaderSize(r, announceBuf)}
	var token []byte
	first, long, short := true, 0, 0
	for {
		line, isLong, err := lr.next()
		switch {
		case first:
			// Written before we started, so nobody else can have come
			// first; without it every line is ignored.
			if t, ok := bytes.CutPrefix(line, []byte("token ")); ok && !isLong {
				token = bytes.Clone(t)
			}
		case len(line) == 0 && err != nil:
			// nothing after the last newline
		default:
			at := tokenAt(line, token)
			if at >= 0 {
				a.apply(line[at+len(token):])
			}
			if isLong {
				if long == 0 {
					fmt.Fprintf(logw, "ptyplex watchdog: skipping a line of more than %d bytes (not from the sidecar)\n", maxLine)
				}
				long++
				a.ignored++
			} else if at != 0 {
				if short == 0 {
					fmt.Fprintf(logw, "ptyplex watchdog: ignoring a line without this run's token (not from the sidecar)\n")
				}
				short++
				a.ignored++
			}
		}
		first = false
		if errors.Is(err, io.EOF) {
			return a
		}
		if err != nil {
			a.err = err
			return a
		}
	}
}

// tokenAt finds where the parent's line starts in line: the last place
// where the token is followed by a space, or -1. Candidates are found by
// the shape of a token (hex digits before a space), not by its value,
// and each is compared in constant time, so how long this takes says
// nothing about the token to whoever wrote the line.
func tokenAt(line, token []byte) int {
	n := len(token)
	if n == 0 {
		return -1
	}
	for q := len(line) - 1; q >= n; q-- {
		if line[q] != ' ' {
			continue
		}
		c := line[q-n : q]
		if isHex(c) && subtle.ConstantTimeCompare(c, token) == 1 {
			return q - n
		}
	}
	return -1
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// apply acts on the words of one of the parent's lines after its token.
func (a *announcements) apply(rest []byte) {
	f := strings.Fields(string(rest))
	switch {
	case len(f) == 1 && f[0] == goodbye:
		a.orderly = true
	case len(f) == 7 && f[0] == "+":
		if w, err := ptyhost.ParseIdentity(strings.Join(f[1:], " ")); err == nil {
			a.live[w.SID] = w
		}
	case len(f) == 2 && f[0] == "-":
		if pid, err := strconv.Atoi(f[1]); err == nil {
			delete(a.live, pid)
		}
	}
}

// lineReader splits the pipe into lines. A line longer than maxLine is
// read to its end however long it is (a bufio.Scanner stops for good at
// one, which is what let garbage end the watchdog) and returned as its
// last maxLine bytes, flagged long: that is where a line of the parent's
// that ended it would be.
type lineReader struct {
	br   *bufio.Reader
	tail []byte
}

// next returns the next line without its newline. At end of file it
// returns what came after the last newline, if anything, with io.EOF.
func (l *lineReader) next() (line []byte, long bool, err error) {
	b, err := l.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull && len(b) <= maxLine+1 && (err == nil || len(b) <= maxLine) {
		return bytes.TrimSuffix(b, []byte("\n")), false, err
	}
	l.tail = append(l.tail[:0], b...)
	for err == bufio.ErrBufferFull {
		if len(l.tail) > 2*maxLine {
			l.tail = append(l.tail[:0], l.tail[len(l.tail)-maxLine:]...)
		}
		b, err = l.br.ReadSlice('\n')
		l.tail = append(l.tail, b...)
	}
	t := bytes.TrimSuffix(l.tail, []byte("\n"))
	if len(t) > maxLine {
		t = t[len(t)-maxLine:]
	}
	return t, true, err
}

// watchdogPace is how long the watchdog waits after a read that brought
// lines and emptied the pipe before it reads again. A busy parent announces
// and retires terminals hundreds of times a second, and a watchdog woken
// for every line cost about as much CPU as the rest of a terminal's
// teardown (a wake-up is a scheduler round trip on both sides, several VM
// exits on a virtual machine). Paced, the lines wait in the pipe (a line is
// 40 to 90 bytes, the parent writes at most a few thousand a second, the
// pipe holds 64 KiB) and are read together, and the parent's writes find
// no reader to wake. A backlog is read at once, 64 KiB at a time (a read
// that fills the buffer is not paced), so a parent that announces faster
// than that, or re-announces every terminal to a new watchdog, never waits
// on the pace. An idle watchdog still sleeps in read(2) until a line comes,
// and the first line after a quiet spell is read at once. The price: after
// the parent dies, the kill begins up to this much later.
const watchdogPace = 20 * time.Millisecond

// announceBuf is the most one read of the announcement pipe takes: a
// pipe's default capacity, so that one read empties a full pipe.
const announceBuf = 64 << 10

// pacedReader reads from r no sooner than pace after its last read that
// returned data without filling the caller's buffer. After a read that
// filled it, more is likely waiting, and the next read goes at once.
type pacedReader struct {
	r     io.Reader
	pace  time.Duration
	now   func() time.Time
	sleep func(time.Duration)
	last  time.Time // of the last short read that returned data; zero otherwise
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if !p.last.IsZero() {
		if wait := p.pace - p.now().Sub(p.last); wait > 0 {
			p.sleep(wait)
		}
	}
	n, err := p.r.Read(b)
	if n > 0 && n < len(b) {
		p.last = p.now()
	} else {
		p.last = time.Time{}
	}
	return n, err
}
