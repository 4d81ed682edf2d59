//go:build unix

package waitcond

import (
	"context"
	"fmt"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// OffScreenError reports a watched line beyond the screen's last row.
type OffScreenError struct{ Line, Rows int }

func (e OffScreenError) Error() string {
	return fmt.Sprintf("line %d is off the screen, which has %d lines (lines are numbered 1..%d)", e.Line, e.Rows, e.Rows)
}

// Run performs the wait s against the daemon at socket. Errors are those
// of wire.CallDataContext (a DaemonError for an error answer) and
// OffScreenError; a timeout or an exit before the condition is an Outcome,
// not an error.
func Run(ctx context.Context, socket string, s Spec) (Outcome, error) {
	w := waiter{socket: socket}
	if s.Timeout > 0 {
		w.deadline = time.Now().Add(s.Timeout)
	}
	switch s.Mode {
	case Exit:
		return w.exit(ctx)
	case Activity:
		return w.activity(ctx)
	case Quiet:
		return w.quiet(ctx, s)
	case Input:
		return w.input(ctx, s)
	default:
		return w.condition(ctx, s)
	}
}

// waiter runs one wait against one socket.
type waiter struct {
	socket   string
	deadline time.Time // zero: none
}

// waitReq is a WAIT bounded by the time left (and by limit when > 0); ok
// is false once the deadline has passed.
func (w waiter) waitReq(req map[string]any, limit time.Duration) (map[string]any, bool) {
	if !w.deadline.IsZero() {
		left := time.Until(w.deadline)
		if left <= 0 {
			return nil, false
		}
		if limit <= 0 || left < limit {
			limit = left
		}
	}
	req["type"] = "WAIT"
	if limit > 0 {
		req["timeout_ms"] = max(limit.Milliseconds(), 1)
	}
	return req, true
}

// call sends req with its fields in both forms (wire.BothForms), as
// every request of the CLI and the MCP server goes.
func (w waiter) call(ctx context.Context, req map[string]any, out any) error {
	return wire.CallDataContext(ctx, w.socket, wire.BothForms(req), out)
}

// nextReq is the WAIT of one round: beyond the generation seen when the
// daemon reports generations, else (another implementation of the
// protocol) the activity flag, as waits worked before generations.
func nextReq(gen *int64) map[string]any {
	if gen == nil {
		return map[string]any{"activity": true}
	}
	return map[string]any{"after_gen": *gen}
}

// send sends the WAIT req bounded by the deadline; ok false means the
// deadline has passed and nothing was sent.
func (w waiter) send(ctx context.Context, req map[string]any, limit time.Duration) (d wire.WaitData, ok bool, err error) {
	req, ok = w.waitReq(req, limit)
	if !ok {
		return d, false, nil
	}
	err = w.call(ctx, req, &d)
	return d, true, err
}

func (w waiter) activity(ctx context.Context) (Outcome, error) {
	d, ok, err := w.send(ctx, map[string]any{"activity": true}, 0)
	if err != nil || !ok || d.TimedOut {
		return Outcome{TimedOut: true}, err
	}
	return w.withExitCode(ctx, Outcome{Met: true, Exited: wire.IsTrue(d.Exited)})
}

func (w waiter) exit(ctx context.Context) (Outcome, error) {
	d, ok, err := w.send(ctx, map[string]any{"activity": false}, 0)
	if err != nil || !ok || d.TimedOut {
		return Outcome{TimedOut: true}, err
	}
	return Outcome{Met: true, Exited: true, ExitCode: d.ExitCode}, nil
}

// generation returns the output generation now (STATUS "with_gen"), nil
// from a daemon that does not report one.
func (w waiter) generation(ctx context.Context) (*int64, error) {
	var st wire.StatusData
	if err := w.call(ctx, map[string]any{"type": "STATUS", "with_gen": true}, &st); err != nil {
		return nil, err
	}
	return st.OutputGen, nil
}

// quiet returns once quietFor passes without output. Output read before
// the wait began (or before AfterGen) does not count.
func (w waiter) quiet(ctx context.Context, s Spec) (Outcome, error) {
	gen := s.AfterGen
	if gen == nil {
		var err error
		if gen, err = w.generation(ctx); err != nil {
			return Outcome{}, err
		}
	}
	for rounds := 0; ; rounds++ {
		// Quiet is only proven by a WAIT bounded by the full quiet period;
		// one cut short by the overall deadline ends in a timeout.
		short := !w.deadline.IsZero() && time.Until(w.deadline) < s.QuietFor
		d, ok, err := w.send(ctx, nextReq(gen), s.QuietFor)
		if err != nil {
			return Outcome{}, err
		}
		switch {
		case !ok:
			return Outcome{TimedOut: true, Rounds: rounds}, nil
		case wire.IsTrue(d.Exited):
			return w.withExitCode(ctx, Outcome{Exited: true, Rounds: rounds})
		case d.TimedOut && short:
			return Outcome{TimedOut: true, Rounds: rounds}, nil
		case d.TimedOut:
			return Outcome{Met: true, Rounds: rounds}, nil
		}
		if gen != nil && d.OutputGen != nil {
			gen = d.OutputGen
		}
	}
}

// input waits in the daemon (WAIT "input"), which samples the kernel. A
// daemon that predates it answers STATUS "input" without the field, and
// the wait is then a quiet period.
func (w waiter) input(ctx context.Context, s Spec) (Outcome, error) {
	var st wire.StatusData
	if err := w.call(ctx, map[string]any{"type": "STATUS", "input": true, "with_gen": true}, &st); err != nil {
		return Outcome{}, err
	}
	if !st.Running {
		return w.withExitCode(ctx, Outcome{Exited: true})
	}
	if st.WaitingForInput == nil && st.OutputGen == nil {
		// Not ours: no generations, no input detection.
		q := s
		q.Mode = Quiet
		if q.QuietFor <= 0 {
			q.QuietFor = wire.InputQuietFallback
		}
		o, err := w.quiet(ctx, q)
		if o.Met {
			o.Detection = "quiet"
		}
		return o, err
	}
	req := map[string]any{"input": true}
	if s.AfterGen != nil {
		req["after_gen"] = *s.AfterGen
	}
	d, ok, err := w.send(ctx, req, 0)
	switch {
	case err != nil:
		return Outcome{}, err
	case !ok || d.TimedOut:
		return Outcome{TimedOut: true}, nil
	case wire.IsTrue(d.WaitingForInput):
		return Outcome{Met: true, Detection: d.Detection}, nil
	}
	return w.withExitCode(ctx, Outcome{Exited: true, ExitCode: d.ExitCode})
}

// watched reads the match text of the watched line or screen and the
// generation it reflects.
func (w waiter) watched(ctx context.Context, line int, pastEmpty bool) (string, *int64, error) {
	req := map[string]any{"type": "OUTPUT", "format": "ascii", "with_gen": true}
	if line > 0 {
		req["from"], req["to"] = line, line
	}
	var out wire.OutputData
	if err := w.call(ctx, req, &out); err != nil {
		return "", nil, err
	}
	if line > out.Size.Rows {
		if pastEmpty {
			return "", out.OutputGen, nil
		}
		return "", nil, OffScreenError{Line: line, Rows: out.Size.Rows}
	}
	return wire.MatchText(out.Screen, line), out.OutputGen, nil
}

// condition re-tests the line or screen after every burst of output. Each
// WAIT asks for output beyond the generation the last screen read
// reflected, so output between two rounds is never missed.
func (w waiter) condition(ctx context.Context, s Spec) (Outcome, error) {
	baseline, gen, err := w.watched(ctx, s.Line, s.PastScreenEmpty)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case s.AfterGen != nil || s.Before != nil:
		// Only output after the input counts: wait for it before the
		// first test, from the input's generation, not this screen's.
		if s.AfterGen != nil && gen != nil {
			gen = s.AfterGen
		}
		if s.Before != nil {
			baseline = *s.Before
		}
	default:
		if m, ok := s.met(baseline); ok && s.Mode != Change {
			return Outcome{Met: true, Already: true, Match: m}, nil
		}
	}
	for rounds := 1; ; rounds++ {
		d, ok, err := w.send(ctx, nextReq(gen), 0)
		if err != nil {
			return Outcome{}, err
		}
		if !ok || d.TimedOut {
			return Outcome{TimedOut: true, Rounds: rounds}, nil
		}
		text, g, err := w.watched(ctx, s.Line, s.PastScreenEmpty)
		if err != nil {
			return Outcome{}, err
		}
		if gen != nil {
			gen = g
		}
		if s.Mode == Change && text != baseline {
			return w.withExitCode(ctx, Outcome{Met: true, Match: text, Exited: wire.IsTrue(d.Exited), Rounds: rounds})
		}
		// With Before, bytes that left the text as it was before the input
		// are not a reaction to it.
		unchanged := s.Before != nil && text == baseline
		if m, ok := s.met(text); ok && s.Mode != Change && !unchanged {
			return w.withExitCode(ctx, Outcome{Met: true, Match: m, Exited: wire.IsTrue(d.Exited), Rounds: rounds})
		}
		if wire.IsTrue(d.Exited) {
			return w.withExitCode(ctx, Outcome{Exited: true, Rounds: rounds})
		}
	}
}

// Snapshot returns the match text of the line (0: the screen) now, for
// Spec.Before: take it just before writing the input.
func Snapshot(ctx context.Context, socket string, line int) (string, error) {
	text, _, err := waiter{socket: socket}.watched(ctx, line, false)
	return text, err
}

// withExitCode fills in the exit code of an exited program from STATUS.
func (w waiter) withExitCode(ctx context.Context, o Outcome) (Outcome, error) {
	if !o.Exited {
		return o, nil
	}
	var st wire.StatusData
	if err := w.call(ctx, map[string]any{"type": "STATUS"}, &st); err == nil {
		o.ExitCode = st.ExitCode
	}
	return o, nil
}
