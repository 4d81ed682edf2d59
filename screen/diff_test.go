package screen

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The differential test feeds the same byte streams to this package, to
// xterm.js (its headless build, driven by node through
// internal/xtermjs/replay.js) and to tmux, and compares the screen text
// and cursor. Where xterm.js and tmux agree, they are taken as the
// answer, and the screen must match it on at least 99.5% of the streams;
// the known remaining differences are listed in README.md.
//
// `make test` (and .ci/run) installs the node side with npm ci and sets
// PTYPLEX_REQUIRE_XTERMJS=1, which turns a missing node, tmux or
// node_modules into a failure instead of a skip.

const (
	xtermjsDir     = "internal/xtermjs"
	diffStreams    = 1200 // generated streams, spread over diffSizes
	diffAgreeRatio = 0.995
	// diffShowDisagree is how many xterm.js/tmux disagreements -v logs.
	diffShowDisagree = 15
	// tmuxDeadline bounds the whole tmux replay (about 30 s on a loaded
	// 2-core machine).
	tmuxDeadline = 5 * time.Minute
	// tmuxLanes is how many panes of each size replay at once.
	tmuxLanes = 2
)

var diffSizes = [][2]int{{80, 24}, {40, 12}, {20, 6}, {132, 40}}

type diffCase struct {
	name       string
	cols, rows int
	data       []byte
	// ref, when set, is the stream the references replay instead of data:
	// the same stream with the screen's deliberate differences spelled out
	// as what it must show (genTwinStreams), so that their answer is the
	// expectation.
	ref []byte
}

// refData is the stream xterm.js and tmux replay for c.
func (c diffCase) refData() []byte {
	if c.ref != nil {
		return c.ref
	}
	return c.data
}

// termState is what one emulator shows: plain lines with trailing blanks
// trimmed and the cursor (0-based, a pending wrap on the last column).
type termState struct {
	Lines []string `json:"lines"`
	Row   int      `json:"row"`
	Col   int      `json:"col"`
	Error string   `json:"error"` // xterm.js threw while parsing
}

// normal trims trailing blanks (xterm.js keeps spaces that were written,
// tmux and we do not) and shows DEC line drawing as the ASCII letters
// that select it (tmux's capture-pane does).
func (a termState) normal() termState {
	out := a
	out.Lines = make([]string, len(a.Lines))
	for i, l := range a.Lines {
		out.Lines[i] = undoSpecial(strings.TrimRight(l, " "))
	}
	return out
}

func (a termState) equal(b termState) bool {
	if a.Error != "" || b.Error != "" {
		return false
	}
	if a.Row != b.Row || a.Col != b.Col || len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Lines {
		if a.Lines[i] != b.Lines[i] {
			return false
		}
	}
	return true
}

func (a termState) diff(b termState) string {
	var out []string
	if a.Row != b.Row || a.Col != b.Col {
		out = append(out, fmt.Sprintf("cursor %d,%d vs %d,%d", a.Row, a.Col, b.Row, b.Col))
	}
	for i := 0; i < len(a.Lines) && i < len(b.Lines); i++ {
		if a.Lines[i] != b.Lines[i] {
			out = append(out, fmt.Sprintf("line %d: %q vs %q", i+1, a.Lines[i], b.Lines[i]))
		}
	}
	return strings.Join(out, "; ")
}

func requireTools(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("PTYPLEX_REQUIRE_XTERMJS") != "" {
		t.Fatalf("%s: %v (make test installs it: see the Makefile's xtermjs target)", what, err)
	}
	t.Skipf("%s: %v (run `make xtermjs` or `make test`)", what, err)
}

func diffCases(t *testing.T) []diffCase {
	var cases []diffCase
	for _, name := range goldenNames(t) {
		data, err := os.ReadFile(filepath.Join(goldenDir, name+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		golden, err := os.ReadFile(filepath.Join(goldenDir, name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		cols, rows := goldenSize(t, golden)
		cases = append(cases, diffCase{"golden/" + name, cols, rows, data, nil})
	}
	// Recorded streams that are not goldens (the reflow test's bash session).
	extra, _ := filepath.Glob("testdata/*.bin")
	for _, f := range extra {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, diffCase{"recorded/" + strings.TrimSuffix(filepath.Base(f), ".bin"), 80, 24, data, nil})
	}
	// Where the screen differs from the references on purpose, the
	// references replay what it must show instead (refData).
	cases = append(cases, deliberateCases...)
	for i := 0; i < diffStreams; i++ {
		sz := diffSizes[i%len(diffSizes)]
		seed := int64(1000 + i)
		ours, ref := genTwinStreams(seed, sz[0], sz[1])
		cases = append(cases, diffCase{fmt.Sprintf("gen/%d/%dx%d", seed, sz[0], sz[1]), sz[0], sz[1], ours, ref})
	}
	return cases
}

// deliberateCases are the screen's chosen differences from xterm.js and
// tmux, each with the stream that shows the references what it must do.
// REP after SGR repeats the character, as interminai's suite requires
// (test_csi_repeat_after_sgr); xterm.js and tmux repeat nothing there.
var deliberateCases = []diffCase{
	{"deliberate/rep-after-sgr", 40, 10, []byte("X\x1b[1m\x1b[3b"), []byte("X\x1b[1mXXX")},
	{"deliberate/rep-after-sgr-reset", 40, 10, []byte("ab\x1b[31m\x1b[m\x1b[2b"), []byte("ab\x1b[31m\x1b[mbb")},
	{"deliberate/rep-wide-after-sgr", 40, 10, []byte("中\x1b[7m\x1b[2b"), []byte("中\x1b[7m中中")},
	{"deliberate/rep-after-sgr-at-margin", 4, 3, []byte("abcd\x1b[1m\x1b[2b"), []byte("abcd\x1b[1mdd")},
}

func oursState(c diffCase) termState {
	s := New(c.cols, c.rows, Options{})
	s.Write(c.data)
	var st termState
	for n := 1; n <= c.rows; n++ {
		st.Lines = append(st.Lines, s.Line(n, false))
	}
	st.Row, st.Col = s.Cursor()
	return st.normal()
}

// runXtermJS replays every case in one node process.
func runXtermJS(t *testing.T, cases []diffCase) []termState {
	node, err := exec.LookPath("node")
	if err != nil {
		requireTools(t, "node", err)
	}
	if _, err := os.Stat(filepath.Join(xtermjsDir, "node_modules", "@xterm", "headless")); err != nil {
		requireTools(t, "@xterm/headless", err)
	}
	cmd := exec.Command(node, "replay.js")
	cmd.Dir = xtermjsDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	// The writer runs beside the reader so neither pipe can fill up and
	// stall the other; it ends when every request is written.
	werr := make(chan error, 1)
	go func() {
		enc := json.NewEncoder(in)
		for _, c := range cases {
			req := map[string]any{"cols": c.cols, "rows": c.rows, "data": base64.StdEncoding.EncodeToString(c.refData())}
			if err := enc.Encode(req); err != nil {
				werr <- err
				return
			}
		}
		werr <- in.Close()
	}()
	res := make([]termState, 0, len(cases))
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for len(res) < len(cases) && sc.Scan() {
		var st termState
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("xterm.js answer %d: %v: %q", len(res), err, sc.Text())
		}
		res = append(res, st.normal())
	}
	if err := <-werr; err != nil {
		t.Fatalf("writing to node: %v", err)
	}
	if err := cmd.Wait(); err != nil || len(res) != len(cases) {
		msg := stderr.String()
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:] // the minified library source is of no use
		}
		t.Fatalf("node replay: %v (%d of %d answers; %v): %s", err, len(res), len(cases), sc.Err(), msg)
	}
	return res
}

// runTmux replays the cases in tmux, tmuxLanes panes per size, each
// working through its share of the streams in turn. Each stream starts
// from a reset pane and ends with CAN (ending any unfinished sequence) and
// a DSR 5 query (the reset also enters and leaves the alternate screen,
// because tmux's RIS keeps the cursor saved by ?1049h and a later ?1049l
// would restore the previous stream's position); the pane's script reads
// the answer, which tmux sends only after parsing everything before it,
// then captures the pane and its cursor into a file itself, so one tmux
// command per stream is all it costs. The test waits for every pane to
// signal its end, then reads the captures.
func runTmux(t *testing.T, cases []diffCase) []termState {
	if _, err := exec.LookPath("tmux"); err != nil {
		requireTools(t, "tmux", err)
	}
	dir := t.TempDir()
	sock := fmt.Sprintf("ptyplex-diff-%d", os.Getpid())
	// A pane that stops answering must fail the test, not hang it.
	ctx, cancel := context.WithTimeout(context.Background(), tmuxDeadline)
	defer cancel()
	tmux := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "tmux", append([]string{"-L", sock, "-f", "/dev/null", "-u"}, args...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := tmux("new-session", "-d", "-s", "keeper", "exec sleep 600"); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	defer exec.Command("tmux", "-L", sock, "kill-server").Run()

	type lane struct {
		cols, rows, n int
	}
	byLane := map[lane][]int{}
	perSize := map[[2]int]int{}
	for i, c := range cases {
		k := [2]int{c.cols, c.rows}
		l := lane{c.cols, c.rows, perSize[k] % tmuxLanes}
		perSize[k]++
		byLane[l] = append(byLane[l], i)
	}
	res := make([]termState, len(cases))
	var wg sync.WaitGroup
	errs := make(chan error, len(byLane))
	for l, idx := range byLane {
		key := fmt.Sprintf("s%dx%d-%d", l.cols, l.rows, l.n)
		d := filepath.Join(dir, key)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, i := range idx {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprint(n)), cases[i].refData(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		script := fmt.Sprintf(`stty raw -echo; i=0; while [ -f %[1]s/$i ]; do
printf '\033[?1049l\033c\033[?1049h\033[?1049l'; cat %[1]s/$i; printf '\030\033[5n'
while IFS= read -r -s -d n rep; do case "$rep" in *'[0') break;; esac; done
tmux -L %[2]s capture-pane -p -t %[3]s \; display-message -p -t %[3]s '#{cursor_y} #{cursor_x}' >%[1]s/$i.out
i=$((i+1)); done; tmux -L %[2]s wait-for -S done-%[3]s; exec sleep 600`, d, sock, key)
		if out, err := tmux("new-session", "-d", "-s", key, "-x", fmt.Sprint(l.cols), "-y", fmt.Sprint(l.rows), script); err != nil {
			t.Fatalf("tmux new-session: %v: %s", err, out)
		}
		wg.Add(1)
		go func(key, d string, cols, rows int, idx []int) {
			defer wg.Done()
			if out, err := tmux("wait-for", "done-"+key); err != nil {
				errs <- fmt.Errorf("wait-for: %v: %s", err, out)
				return
			}
			for n, i := range idx {
				b, err := os.ReadFile(filepath.Join(d, fmt.Sprint(n)+".out"))
				if err != nil {
					errs <- fmt.Errorf("capture of %s: %v", cases[i].name, err)
					return
				}
				lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
				var st termState
				fmt.Sscanf(lines[len(lines)-1], "%d %d", &st.Row, &st.Col)
				if st.Col >= cols { // tmux shows a pending wrap as one past the margin
					st.Col = cols - 1
				}
				for r := 0; r < rows; r++ {
					l := ""
					if r < len(lines)-1 {
						l = strings.TrimRight(lines[r], " ")
					}
					st.Lines = append(st.Lines, l)
				}
				res[i] = st.normal()
			}
		}(key, d, l.cols, l.rows, idx)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return res
}

func TestDifferentialXtermJSTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	cases := diffCases(t)
	// The two references replay at the same time.
	var xj, tm []termState
	var xjSkipped, tmSkipped bool
	ok := t.Run("replay", func(t *testing.T) {
		t.Run("xterm.js", func(t *testing.T) {
			t.Parallel()
			defer func() { xjSkipped = t.Skipped() }()
			xj = runXtermJS(t, cases)
		})
		t.Run("tmux", func(t *testing.T) {
			t.Parallel()
			defer func() { tmSkipped = t.Skipped() }()
			tm = runTmux(t, cases)
		})
	})
	switch {
	case !ok:
		t.Fatal("a reference replay failed")
	case xjSkipped || tmSkipped:
		// A reference that is not installed skipped its replay and said
		// why (requireTools fails instead under PTYPLEX_REQUIRE_XTERMJS).
		t.Skip("a reference is missing: nothing to compare with")
	case xj == nil || tm == nil:
		t.Fatal("a reference replay returned nothing")
	}

	agree, match := 0, 0
	var misses []string
	kinds := map[string]int{}
	for i, c := range cases {
		ours := oursState(c)
		if !strings.HasPrefix(c.name, "gen/") {
			t.Logf("%s: ours=xterm.js %v, ours=tmux %v, xterm.js=tmux %v", c.name, ours.equal(xj[i]), ours.equal(tm[i]), xj[i].equal(tm[i]))
		}
		if xj[i].Error != "" {
			kinds["xterm.js threw: "+xj[i].Error]++
			continue
		}
		if !xj[i].equal(tm[i]) {
			// The reference emulators disagree (mostly emoji widths: xterm.js
			// uses Unicode 6 widths). Nothing to hold the screen to.
			kinds["xterm.js/tmux disagree"]++
			if testing.Verbose() && kinds["xterm.js/tmux disagree"] <= diffShowDisagree {
				t.Logf("%s: xterm.js vs tmux: %s\n    stream %q", c.name, xj[i].diff(tm[i]), c.data)
			}
			if ours.equal(tm[i]) {
				kinds["  ours = tmux"]++
			} else if ours.equal(xj[i]) {
				kinds["  ours = xterm.js"]++
			} else {
				kinds["  ours = neither"]++
			}
			continue
		}
		agree++
		if strings.HasPrefix(c.name, "deliberate/") && !ours.equal(xj[i]) {
			t.Errorf("%s: ours vs both: %s", c.name, ours.diff(xj[i]))
		}
		if ours.equal(xj[i]) {
			match++
			continue
		}
		misses = append(misses, fmt.Sprintf("%s: ours vs both: %s\n    stream %q", c.name, ours.diff(xj[i]), c.data))
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		t.Logf("%s: %d", k, kinds[k])
	}
	t.Logf("%d streams; xterm.js and tmux agree on %d; the screen matches %d of those (%.2f%%)",
		len(cases), agree, match, 100*float64(match)/float64(max(agree, 1)))
	for _, m := range misses {
		t.Log(m)
	}
	if agree < len(cases)/2 {
		t.Errorf("xterm.js and tmux agree on only %d of %d streams: the harness is broken", agree, len(cases))
	}
	if float64(match) < diffAgreeRatio*float64(agree) {
		t.Errorf("screen matches %d of %d agreed streams, below %.1f%%", match, agree, 100*diffAgreeRatio)
	}
}

// TestWideEditingXtermJS replays the wide-character editing table
// (editwide_test.go) and every editing operation at every column over
// wide characters in xterm.js: the table's expectations are what xterm.js
// shows, and this keeps them honest.
func TestWideEditingXtermJS(t *testing.T) {
	var cases []diffCase
	for _, tc := range wideEditingCases {
		cols, rows := tc.cols, tc.rows
		if cols == 0 {
			cols, rows = 10, 4
		}
		cases = append(cases, diffCase{tc.name, cols, rows, []byte(tc.in), nil})
	}
	every, margins := wideEveryColumn()
	for i, c := range every {
		if !margins[i] { // xterm.js has no DECSLRM
			cases = append(cases, c)
		}
	}
	xj := runXtermJS(t, cases)
	for i, c := range cases {
		if ours := oursState(c); !ours.equal(xj[i]) {
			t.Errorf("%s: ours vs xterm.js: %s", c.name, ours.diff(xj[i]))
		}
	}
}
