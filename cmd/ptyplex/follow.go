//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/session/wire"
)

// follower prints a session's screen (or its new lines) until the
// program exits. Each round blocks in the daemon (WAIT "after_gen") until
// output newer than the last screen read arrives: nothing polls, and
// nothing printed between two rounds is missed on the screen.
type follower struct {
	socket string
	req    map[string]any // the OUTPUT request of the screen mode
	cursor string
	number bool
	clear  bool // stdout is a terminal: repaint instead of appending
}

const followSeparator = "----\n"

// screens prints the screen whenever its text changes.
func (f *follower) screens() int {
	req := map[string]any{"with_gen": true}
	for k, v := range f.req {
		req[k] = v
	}
	last := ""
	first := true
	for {
		var ans outputAnswer
		if !call(f.socket, req, &ans) {
			return exitFail
		}
		out := ans.resolved()
		if text := renderOutput(out, f.cursor, f.number); first || text != last {
			switch {
			case f.clear:
				fmt.Print("\x1b[H\x1b[2J")
			case !first:
				fmt.Print(followSeparator)
			}
			fmt.Print(text)
			last, first = text, false
		}
		exited, stopped, ok := f.next(out.OutputGen)
		if !ok {
			return exitFail
		}
		if stopped {
			return exitOK // the screen printed last is the final one
		}
		if exited {
			return f.final(req, last)
		}
	}
}

// final prints the screen once more if the last output changed it.
func (f *follower) final(req map[string]any, last string) int {
	var ans outputAnswer
	if !call(f.socket, req, &ans) {
		return exitFail
	}
	if text := renderOutput(ans.resolved(), f.cursor, f.number); text != last {
		if f.clear {
			fmt.Print("\x1b[H\x1b[2J")
		} else {
			fmt.Print(followSeparator)
		}
		fmt.Print(text)
	}
	return exitOK
}

// next blocks until output newer than gen or the exit. stopped says that
// the session was stopped meanwhile (STOP, or its daemon is gone): that
// ends the program too, but nothing can be read any more, so the caller
// ends with what it read last (a note on stderr says so).
func (f *follower) next(gen *int64) (exited, stopped, ok bool) {
	if gen == nil {
		printError(fmt.Errorf("the daemon at %s does not report output generations (an older ptyplex?)", f.socket))
		return false, false, false
	}
	var w wire.WaitData
	err := wire.CallData(f.socket, wire.BothForms(map[string]any{"type": "WAIT", "after_gen": *gen}), &w)
	if sessionStopped(err) {
		fmt.Fprintf(os.Stderr, "ptyplex output: the session was stopped; its screen as last read is the final one\n")
		return false, true, true
	}
	if err != nil {
		printError(err)
		return false, false, false
	}
	return wire.IsTrue(w.Exited), false, true
}

// sessionStopped tells the errors of a session that ended while we
// followed it: its daemon answering that it is shutting down, or gone
// (the socket refuses connections, or STOP removed it).
func sessionStopped(err error) bool {
	var de wire.DaemonError
	if errors.As(err, &de) {
		return de.Text == "Daemon is shutting down"
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// lines prints the scrollback's lines as they scroll off the screen, then,
// once the program has exited, the screen (without its trailing blank
// lines). It starts with the scrollback that exists already. Lines that
// scrolled by and left the scrollback before it could read them are
// marked where they are missing, on stdout and on stderr (gap).
func (f *follower) lines() int {
	format := f.req["format"]
	// The probe reads the counts, and the screen, which is printed in the
	// end should the session be stopped before the program exits.
	probe := map[string]any{"type": "OUTPUT", "format": format, "from": 1, "with_gen": true}
	var st wire.OutputData
	if !call(f.socket, probe, &st) {
		return exitFail
	}
	if st.ScrolledOff == nil {
		return f.linesByTail(format, probe, st) // an older daemon
	}
	// next is the number, counted as scrolled_off counts, of the next
	// line to print: first the oldest one the scrollback holds.
	next := *st.ScrolledOff - st.ScrollbackAvailable
	for {
		screen, top := splitScreen(st.Screen), *st.ScrolledOff
		var ok bool
		if next, st, ok = f.catchUp(format, next, st); !ok {
			return exitFail
		}
		exited, stopped, ok := f.next(st.OutputGen)
		if !ok {
			return exitFail
		}
		if stopped {
			// The screen as probed; its top rows are the lines catchUp
			// printed when more scrolled off before it read them.
			printFinal(nil, screen[min(max(next-top, 0), len(screen)):])
			return exitOK
		}
		if exited {
			return f.finalCounted(format, next)
		}
		if !call(f.socket, probe, &st) {
			return exitFail
		}
	}
}

// catchUp prints the lines from number next up to the last that had
// scrolled off at st (an OUTPUT answer with scrolled_off), and the gap
// where some have left the scrollback. It returns the number of the next
// line to print and the answer of its last read.
func (f *follower) catchUp(format any, next int, st wire.OutputData) (int, wire.OutputData, bool) {
	for again := false; ; again = true {
		total := *st.ScrolledOff
		if total <= next {
			return min(next, total), st, true
		}
		n := min(total-next, st.ScrollbackAvailable)
		if n <= 0 {
			f.gap(total - next)
			return total, st, true
		}
		var from any = -n
		if again {
			from = "-" // the whole scrollback: it starts at its oldest line
		}
		var out wire.OutputData
		if !call(f.socket, map[string]any{"type": "OUTPUT", "format": format, "from": from, "to": 0, "with_gen": true}, &out) {
			return next, st, false
		}
		if out.ScrolledOff == nil {
			printError(fmt.Errorf("the daemon at %s stopped reporting scrolled_off", f.socket))
			return next, st, false
		}
		got := splitScreen(out.Screen)
		first := *out.ScrolledOff - len(got) // the number of got[0]
		if first > next && first > *out.ScrolledOff-out.ScrollbackAvailable {
			// More lines scrolled off between the two reads, and the
			// older ones are still held: read again, all that is held.
			st = out
			continue
		}
		if first > next {
			f.gap(first - next)
		}
		for _, l := range got[min(max(next-first, 0), len(got)):] {
			fmt.Println(termfilter.EscapeBidi(l))
		}
		return *out.ScrolledOff, out, true
	}
}

// finalCounted prints the lines from number next that scrolled off since
// the last round, then the screen.
func (f *follower) finalCounted(format any, next int) int {
	var out wire.OutputData
	if !call(f.socket, map[string]any{"type": "OUTPUT", "format": format, "from": "-", "with_gen": true}, &out) {
		return exitFail
	}
	all := splitScreen(out.Screen)
	sb := all[:min(out.ScrollbackAvailable, len(all))]
	scr := all[len(sb):]
	if out.ScrolledOff != nil {
		first := *out.ScrolledOff - len(sb)
		if first > next {
			f.gap(first - next)
		}
		sb = sb[min(max(next-first, 0), len(sb)):]
	}
	printFinal(sb, scr)
	return exitOK
}

// gap says, where they are missing, that n lines scrolled by and left the
// scrollback before they could be read: on stdout, as run marks lost
// lines, and on stderr.
func (f *follower) gap(n int) {
	note := fmt.Sprintf("%d lines here had already left the scrollback", n)
	fmt.Printf("@@ ptyplex output: %s (start --scrollback N keeps more; or read the program's output another way, e.g. a file) @@\n", note)
	fmt.Fprintf(os.Stderr, "ptyplex output: %s\n", note)
}

// splitScreen is an OUTPUT answer's lines.
func splitScreen(screen string) []string {
	if screen == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
}

// printFinal prints the scrollback lines sb, then the screen scr without
// its trailing blank lines.
func printFinal(sb, scr []string) {
	for len(scr) > 0 && strings.TrimSpace(stripSGR(scr[len(scr)-1])) == "" {
		scr = scr[:len(scr)-1]
	}
	for _, l := range append(sb, scr...) {
		fmt.Println(termfilter.EscapeBidi(l))
	}
}

// linesByTail is lines for a daemon that does not report scrolled_off:
// it counts the lines printed by scrollback_available while the
// scrollback is not full, and once it is finds its place by the last lines
// printed; when those have left the scrollback, lines were lost, how many
// it cannot tell.
func (f *follower) linesByTail(format any, probe map[string]any, st wire.OutputData) int {
	printed := 0      // scrollback lines printed, as counted by scrollback_available
	var tail []string // the last lines printed, to find our place in a full ring
	emit := func(lines []string) {
		for _, l := range lines {
			fmt.Println(termfilter.EscapeBidi(l))
		}
		tail = append(tail, lines...)
		if len(tail) > 3 {
			tail = tail[len(tail)-3:]
		}
	}
	for {
		avail, full := st.ScrollbackAvailable, st.ScrollbackAvailable >= st.ScrollbackCapacity
		switch {
		case avail < printed: // the scrollback was cleared
			printed = avail
		case avail > printed && !full:
			got, ok := f.scrollback(format, avail-printed)
			if !ok {
				return exitFail
			}
			emit(got)
			printed = avail
		case full && avail > 0:
			got, found, ok := f.fullRing(format, avail, tail)
			if !ok {
				return exitFail
			}
			if !found {
				f.gapUnknown()
			}
			emit(got)
			printed = avail
		}
		exited, stopped, ok := f.next(st.OutputGen)
		if !ok {
			return exitFail
		}
		if stopped {
			return exitOK // this daemon's screen was not read along: it is lost
		}
		if exited {
			return f.finalLines(format, printed, tail)
		}
		if !call(f.socket, probe, &st) {
			return exitFail
		}
	}
}

// gapUnknown is gap for a count it cannot tell.
func (f *follower) gapUnknown() {
	note := "lines here had already left the scrollback (how many, this daemon does not say)"
	fmt.Printf("@@ ptyplex output: %s (start --scrollback N keeps more) @@\n", note)
	fmt.Fprintf(os.Stderr, "ptyplex output: %s\n", note)
}

// finalLines prints what scrolled off since the last round and the screen.
func (f *follower) finalLines(format any, printed int, tail []string) int {
	var out wire.OutputData
	if !call(f.socket, map[string]any{"type": "OUTPUT", "format": format, "from": "-"}, &out) {
		return exitFail
	}
	all := splitScreen(out.Screen)
	sb := all[:min(out.ScrollbackAvailable, len(all))]
	scr := all[len(sb):]
	if out.ScrollbackAvailable < out.ScrollbackCapacity {
		sb = sb[min(printed, len(sb)):]
	} else {
		var found bool
		if sb, found = newAfter(sb, tail); !found {
			f.gapUnknown()
		}
	}
	printFinal(sb, scr)
	return exitOK
}

// scrollback returns the newest n scrollback lines.
func (f *follower) scrollback(format any, n int) ([]string, bool) {
	var out wire.OutputData
	if !call(f.socket, map[string]any{"type": "OUTPUT", "format": format, "from": -n, "to": 0}, &out) {
		return nil, false
	}
	if out.Screen == "" {
		return nil, true
	}
	return strings.Split(strings.TrimSuffix(out.Screen, "\n"), "\n"), true
}

// fullRing returns the new lines of a full scrollback ring, where the
// count of lines no longer tells how many are new: it finds the last lines
// printed (tail) in the newest lines, reading further back until it does;
// found is false when they are no longer there.
func (f *follower) fullRing(format any, avail int, tail []string) (rest []string, found, ok bool) {
	for n := min(avail, 64); ; n = min(avail, 4*n) {
		got, ok := f.scrollback(format, n)
		if !ok {
			return nil, false, false
		}
		if rest, found := newAfter(got, tail); found || n == avail {
			return rest, found, true
		}
	}
}

// newAfter returns the lines of got after the last occurrence of tail.
// Without tail every line is new; found is false when tail is not there
// (it scrolled out of the ring: lines were lost, or got is too short).
func newAfter(got, tail []string) (rest []string, found bool) {
	if len(tail) == 0 {
		return got, true
	}
	for i := len(got) - len(tail); i >= 0; i-- {
		if slicesEqual(got[i:i+len(tail)], tail) {
			return got[i+len(tail):], true
		}
	}
	return got, false
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stripSGR drops colour sequences, to tell a blank ANSI line.
func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
