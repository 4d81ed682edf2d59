package screen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoldenAgainstTmux replays each recorded stream in a tmux pane of
// the same size and compares tmux's screen and cursor with ours: tmux is
// an independent, widely used emulator, so agreement means the goldens
// were not just blessed by the code under test. Skipped without tmux.
func TestGoldenAgainstTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	sock := fmt.Sprintf("ptyplex-screen-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null", "-u"}, args...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// A keeper session holds the server up between the per-stream
	// sessions; otherwise killing the last one races with the next start.
	if out, err := tmux("new-session", "-d", "-s", "keeper", "exec sleep 600"); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	defer tmux("kill-server")

	for _, name := range goldenNames(t) {
		t.Run(name, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join(goldenDir, name+".bin"))
			golden, err := os.ReadFile(filepath.Join(goldenDir, name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			cols, rows := goldenSize(t, golden)
			stream, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			s := New(cols, rows, Options{})
			s.Write(stream)

			// The pane's tty is raw so the bytes reach tmux unchanged; the
			// wait-for channel tells us when cat has written everything.
			ch := "done-" + name
			script := fmt.Sprintf("stty raw -echo; cat %q; tmux -L %s wait-for -S %s; exec sleep 600", bin, sock, ch)
			if out, err := tmux("new-session", "-d", "-s", name, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), script); err != nil {
				t.Fatalf("tmux new-session: %v: %s", err, out)
			}
			defer tmux("kill-session", "-t", name)
			if out, err := tmux("wait-for", ch); err != nil {
				t.Fatalf("tmux wait-for: %v: %s", err, out)
			}
			// tmux parses pane output asynchronously and tells nobody when
			// it is done: poll until the pane has looked the same for five
			// captures in a row (a busy machine can pause tmux briefly), for
			// at most ten seconds.
			var screen, prev string
			for i, same := 0, 0; i < 500 && same < 5; i++ {
				screen, _ = tmux("capture-pane", "-p", "-t", name)
				if screen == prev {
					same++
				} else {
					same = 0
				}
				prev = screen
				time.Sleep(20 * time.Millisecond)
			}
			want := strings.Split(strings.TrimRight(screen, "\n"), "\n")
			for len(want) < rows {
				want = append(want, "")
			}
			mismatch := 0
			for i := 0; i < rows; i++ {
				got := s.Line(i+1, false)
				// capture-pane prints DEC line-drawing cells as the ASCII
				// letters that selected them; we show the glyphs.
				if strings.TrimRight(want[i], " ") != got && strings.TrimRight(want[i], " ") != undoSpecial(got) {
					mismatch++
					t.Errorf("line %d:\n  tmux %q\n  ours %q", i+1, want[i], got)
				}
			}
			// The history above the screen must match our scrollback. tmux
			// also keeps lines scrolled out of a region that starts below
			// the first line; xterm and we do not, so that stream is skipped.
			var hist string
			size, _ := tmux("display-message", "-p", "-t", name, "#{history_size}")
			if strings.TrimSpace(size) != "0" {
				hist, _ = tmux("capture-pane", "-p", "-t", name, "-S", "-", "-E", "-1")
			}
			var ours []string
			for n := -s.ScrollbackLen(); n < 0; n++ {
				ours = append(ours, s.Line(n, false))
			}
			if h := strings.TrimRight(hist, "\n"); name != "scroll-region" && h != strings.Join(ours, "\n") {
				t.Errorf("scrollback differs:\ntmux:\n%s\nours:\n%s", h, strings.Join(ours, "\n"))
			}
			cur, _ := tmux("display-message", "-p", "-t", name, "#{cursor_y} #{cursor_x}")
			row, col := s.Cursor()
			var trow, tcol int
			fmt.Sscanf(cur, "%d %d", &trow, &tcol)
			if tcol == cols { // tmux shows a pending wrap as one past the margin
				tcol = cols - 1
			}
			if trow != row || tcol != col {
				t.Errorf("cursor: tmux %q, ours %d %d", strings.TrimSpace(cur), row, col)
			}
		})
	}
}

// undoSpecial maps DEC special graphics glyphs back to their ASCII keys.
func undoSpecial(line string) string {
	return strings.Map(func(r rune) rune {
		for i, g := range decSpecial {
			if g == r && r > 0x7f {
				return rune(0x5f + i)
			}
		}
		return r
	}, line)
}
