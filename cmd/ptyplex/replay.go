package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
	"github.com/ptyplex/ptyplex/replay"
)

func init() {
	register("replay", "replay a recorded frame fixture against a fresh sidecar", runReplay)
}

// runReplay replays each fixture named on the command line and reports, per
// fixture, ok or the mismatches. It exits 0 when all replayed green, 1 when
// one did not, 2 on usage or I/O errors.
func runReplay(args []string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	sidecar := fs.String("sidecar", "", "ptyplex-sidecar to test (default: next to ptyplex, else PATH)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the sidecar before each host frame")
	dump := fs.Bool("dump", false, "print the fixture's records instead of replaying them")
	verbose := fs.Bool("v", false, "pass the sidecar's stderr through")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ptyplex replay [flags] FIXTURE...\n\n"+
			"Feeds each fixture's host frames to a fresh ptyplex-sidecar, in order, and checks\n"+
			"the answers against the recording: per terminal the same OPENED/ERROR/EXIT frames\n"+
			"(pids aside) and the same output. Fixtures are written by ptyplex-sidecar --record.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if *dump {
		for _, path := range fs.Args() {
			if err := dumpFixture(os.Stdout, path); err != nil {
				fmt.Fprintln(os.Stderr, "ptyplex replay:", err)
				return 2
			}
		}
		return 0
	}
	opts := replay.Options{Sidecar: *sidecar, StepTimeout: *timeout}
	if *verbose {
		opts.Stderr = os.Stderr
	}
	code := 0
	for _, path := range fs.Args() {
		f, err := replay.Load(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ptyplex replay:", err)
			return 2
		}
		rep, err := replay.Run(f, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ptyplex replay:", err)
			return 2
		}
		fmt.Println(rep)
		if !rep.OK() {
			code = 1
		}
	}
	return code
}

// dumpFixture prints one line per record.
func dumpFixture(w io.Writer, path string) error {
	recs, err := record.ReadFile(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d records\n", path, len(recs))
	for _, r := range recs {
		fmt.Fprintf(w, "%12s  %-7s  ", r.At.Round(time.Microsecond), r.Kind)
		switch r.Kind {
		case record.FromHost, record.FromSidecar:
			f := r.Frame
			if f.Type == proto.TypeInput || f.Type == proto.TypeOutput {
				id, data, err := proto.ParseData(f.Body)
				if err == nil {
					show := data
					if len(show) > 60 {
						show = show[:60]
					}
					fmt.Fprintf(w, "%-6s %s %d bytes %q\n", f.Type, id, len(data), show)
					continue
				}
			}
			fmt.Fprintf(w, "%-6s %s\n", f.Type, f.Body)
		default:
			fmt.Fprintf(w, "%s\n", r.Raw)
		}
	}
	return nil
}
