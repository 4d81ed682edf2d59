// Command genfixtures records the frame fixtures in testdata/fixtures from
// real sessions: it drives a real ptyplex-sidecar started with --record
// through each scenario below, the way a host would (waiting for prompts,
// echoes and parked output before acting), then adds the notes a scenario
// needs. Rerunning it reproduces the fixtures (up to timestamps and pids).
//
//	go run ./replay/internal/genfixtures [-sidecar PATH] [-out testdata/fixtures] [name...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
	"github.com/ptyplex/ptyplex/replay"
)

const waitBound = 15 * time.Second

// scenario is one recorded session. notes are added to the fixture.
type scenario struct {
	name  string
	about string
	run   func(h *host)
	notes []record.Annotation
}

func main() {
	sidecar := flag.String("sidecar", "", "ptyplex-sidecar to record with (default: build ./cmd/ptyplex-sidecar)")
	out := flag.String("out", "testdata/fixtures", "directory to write the fixtures to")
	flag.Parse()
	if *sidecar == "" {
		dir, err := os.MkdirTemp("", "genfixtures-")
		check(err)
		defer os.RemoveAll(dir)
		*sidecar = filepath.Join(dir, "ptyplex-sidecar")
		build := exec.Command("go", "build", "-o", *sidecar, "./cmd/ptyplex-sidecar")
		build.Stderr = os.Stderr
		check(build.Run())
	}
	check(os.MkdirAll(*out, 0o755))
	want := map[string]bool{}
	for _, n := range flag.Args() {
		want[n] = true
	}
	for _, sc := range scenarios {
		if len(want) > 0 && !want[sc.name] {
			continue
		}
		path := filepath.Join(*out, sc.name+".fixture")
		if err := recordScenario(*sidecar, path, sc); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", sc.name, err)
			os.Exit(1)
		}
		fi, _ := os.Stat(path)
		fmt.Printf("%-22s %7d bytes  %s\n", sc.name, fi.Size(), sc.about)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "genfixtures:", err)
		os.Exit(1)
	}
}

// host drives one session; a failed wait aborts the scenario.
type host struct {
	s *replay.Session
}

type abort struct{ err error }

func (h *host) fail(format string, args ...any) {
	panic(abort{fmt.Errorf(format, args...)})
}

func (h *host) send(err error) {
	if err != nil {
		h.fail("sending: %v", err)
	}
}

func (h *host) open(o proto.Open) {
	if o.Cols == 0 {
		o.Cols, o.Rows = 80, 24
	}
	h.send(h.s.SendJSON(proto.TypeOpen, o))
}

func (h *host) sh(id, script string) {
	h.open(proto.Open{TerminalID: id, Cmd: "/bin/sh", Args: []string{"-c", script}})
}

func (h *host) input(id, data string) { h.send(h.s.Input(id, data)) }

func (h *host) until(what string, cond func(v replay.View) bool) {
	if !h.s.Until(waitBound, cond) {
		h.fail("timed out waiting for %s", what)
	}
}

func (h *host) waitControl(id string, t proto.Type, n int) {
	h.until(fmt.Sprintf("%s number %d of %q", t, n, id), func(v replay.View) bool { return v.Term(id).Count(t) >= n })
}

func (h *host) waitOutput(id, s string) {
	h.until(fmt.Sprintf("%q in the output of %q", s, id), func(v replay.View) bool { return strings.Contains(string(v.Term(id).Output), s) })
}

func recordScenario(sidecar, path string, sc scenario) (err error) {
	raw := path + ".raw"
	defer os.Remove(raw)
	s, err := replay.Start(sidecar, os.Stderr, "--record", raw)
	if err != nil {
		return err
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				a, ok := r.(abort)
				if !ok {
					panic(r)
				}
				err = a.err
				s.Kill()
			}
		}()
		sc.run(&host{s})
	}()
	if err != nil {
		return err
	}
	if err := s.Finish(waitBound); err != nil {
		return err
	}
	recs, err := record.ReadFile(raw)
	if err != nil {
		return err
	}
	var notes []record.Record
	for _, n := range sc.notes {
		b := proto.Marshal(n)
		notes = append(notes, record.Record{Kind: record.Note, Raw: b})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := record.WriteAll(f, append(notes, recs...)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
