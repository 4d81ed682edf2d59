package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
)

// Options configure a replay.
type Options struct {
	// Sidecar is the ptyplex-sidecar to test; "" means client.FindSidecar.
	Sidecar string
	// StepTimeout bounds each wait before a host frame, and the sidecar's
	// shutdown at the end; 0 means 10 s.
	StepTimeout time.Duration
	// Stderr receives the sidecar's diagnostics; nil discards them.
	Stderr io.Writer
}

// Report is the outcome of one replay.
type Report struct {
	Fixture    string
	Steps      int // host actions performed
	Mismatches []string
	Elapsed    time.Duration
}

// OK reports whether the sidecar behaved as recorded.
func (r *Report) OK() bool { return len(r.Mismatches) == 0 }

func (r *Report) String() string {
	if r.OK() {
		return fmt.Sprintf("ok   %s (%d host steps, %v)", r.Fixture, r.Steps, r.Elapsed.Round(time.Millisecond))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FAIL %s (%d mismatches)", r.Fixture, len(r.Mismatches))
	for _, m := range r.Mismatches {
		fmt.Fprintf(&b, "\n     %s", m)
	}
	return b.String()
}

func (r *Report) mismatch(format string, args ...any) {
	r.Mismatches = append(r.Mismatches, fmt.Sprintf(format, args...))
}

// Run replays f against a fresh sidecar. The error is for failing to run
// at all (no sidecar); everything the sidecar did differently is in the
// report.
func Run(f *Fixture, opts Options) (*Report, error) {
	if opts.Sidecar == "" {
		p, err := client.FindSidecar()
		if err != nil {
			return nil, err
		}
		opts.Sidecar = p
	}
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = 10 * time.Second
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	start := time.Now()
	s, err := Start(opts.Sidecar, opts.Stderr)
	if err != nil {
		return nil, err
	}
	rep := &Report{Fixture: f.Name}
	for i, step := range f.Steps {
		if !s.Until(opts.StepTimeout, func(v View) bool { return reached(v, step.Before) }) {
			rep.mismatch("before host step %d (%s): %s", i+1, describeStep(step), lag(s, step.Before, opts.StepTimeout))
			break
		}
		rep.Steps++
		if step.EOF {
			s.CloseInput()
			break
		}
		if err := s.Send(step.Frame); err != nil {
			rep.mismatch("host step %d (%s): writing to the sidecar: %v", i+1, describeStep(step), err)
			break
		}
	}
	if err := s.Finish(opts.StepTimeout); err != nil {
		rep.mismatch("%v", err)
	}
	compare(rep, f, s)
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// reached reports whether every terminal got at least what before asks.
func reached(v View, before map[string]Progress) bool {
	for id, want := range before {
		t := v.Term(id)
		if len(t.Controls) < want.Controls || len(t.Output) < want.Bytes {
			return false
		}
	}
	return true
}

// lag describes which terminals fell short of before.
func lag(s *Session, before map[string]Progress, waited time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	terms := s.terms
	var short []string
	for _, id := range sortedKeys(before) {
		want := before[id]
		var gotC, gotB int
		if t := terms[id]; t != nil {
			gotC, gotB = len(t.Controls), len(t.Output)
		}
		if gotC < want.Controls || gotB < want.Bytes {
			short = append(short, fmt.Sprintf("terminal %q has %d of %d control frames and %d of %d output bytes", id, gotC, want.Controls, gotB, want.Bytes))
		}
	}
	how := fmt.Sprintf("gave up after %v", waited)
	if s.ended {
		how = "the sidecar's output ended"
	}
	return how + ": " + strings.Join(short, "; ")
}

func describeStep(st Step) string {
	if st.EOF {
		return "close stdin"
	}
	f, err := proto.NewReader(strings.NewReader(string(st.Frame))).ReadFrame()
	if err != nil {
		return "undecodable frame"
	}
	if f.Type == proto.TypeInput {
		id, data, err := proto.ParseData(f.Body)
		if err == nil {
			return fmt.Sprintf("INPUT %q %q", id, clip(data, 40))
		}
	}
	return fmt.Sprintf("%s %s", f.Type, clip(f.Body, 120))
}

// compare checks everything received against the recording.
func compare(rep *Report, f *Fixture, s *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids, terms := s.order, s.terms
	for _, v := range s.violations {
		rep.mismatch("protocol: %s", v)
	}
	seen := map[string]bool{}
	for _, id := range f.Order {
		seen[id] = true
		got := terms[id]
		if got == nil {
			got = &Term{}
		}
		compareTerm(rep, id, f.Expect[id], got)
	}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		if t := terms[id]; len(t.Controls) > 0 || len(t.Output) > 0 {
			rep.mismatch("terminal %q: not in the recording, but the sidecar sent %d control frames and %d output bytes for it", id, len(t.Controls), len(t.Output))
		}
	}
}

func compareTerm(rep *Report, id string, want *Expected, got *Term) {
	n := max(len(want.Controls), len(got.Controls))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(got.Controls):
			rep.mismatch("terminal %q: control frame %d: want %s, got nothing", id, i+1, describeControl(want.Controls[i]))
		case i >= len(want.Controls):
			rep.mismatch("terminal %q: control frame %d: want nothing, got %s", id, i+1, describeControl(got.Controls[i]))
		case !sameMeaning(want.Controls[i], got.Controls[i]):
			rep.mismatch("terminal %q: control frame %d: want %s, got %s", id, i+1, describeControl(want.Controls[i]), describeControl(got.Controls[i]))
		}
	}
	switch want.Mode {
	case record.OutputIgnore:
	case record.OutputLength:
		if len(want.Output) != len(got.Output) {
			rep.mismatch("terminal %q: want %d output bytes, got %d", id, len(want.Output), len(got.Output))
		}
	default:
		if at, ok := firstDifference(want.Output, got.Output); !ok {
			lo := max(0, at-20)
			rep.mismatch("terminal %q: output differs at byte %d of %d (got %d): want %q, got %q", id, at, len(want.Output), len(got.Output),
				clip(want.Output[min(lo, len(want.Output)):], 60), clip(got.Output[min(lo, len(got.Output)):], 60))
		}
	}
}

// sameMeaning compares two control frames by type and fields; OPENED's
// pid differs from run to run and its features from version to version, so
// both are left out.
func sameMeaning(a, b Control) bool {
	if a.Type != b.Type {
		return false
	}
	fa, fb := maps.Clone(a.Fields), maps.Clone(b.Fields)
	if a.Type == proto.TypeOpened {
		delete(fa, "pid")
		delete(fb, "pid")
		delete(fa, "features")
		delete(fb, "features")
	}
	return reflect.DeepEqual(fa, fb)
}

func describeControl(c Control) string {
	fields := maps.Clone(c.Fields)
	delete(fields, "terminalId")
	if c.Type == proto.TypeOpened {
		delete(fields, "pid")
		delete(fields, "features")
	}
	if len(fields) == 0 {
		return c.Type.String()
	}
	b, _ := json.Marshal(fields)
	return fmt.Sprintf("%s %s", c.Type, b)
}

func firstDifference(a, b []byte) (int, bool) {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i, false
		}
	}
	return n, len(a) == len(b)
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
