package screen

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/screen/*.golden from the current emulator")

const goldenDir = "../testdata/screen"

// goldenSize reads the "size COLS ROWS" header of a golden file.
func goldenSize(t *testing.T, data []byte) (int, int) {
	var cols, rows int
	if _, err := fmt.Sscanf(string(data), "size %d %d\n", &cols, &rows); err != nil {
		t.Fatalf("golden header: %v", err)
	}
	return cols, rows
}

// describe renders everything a golden pins down: size, cursor, modes,
// title, the scrollback and the screen, plain text.
func describe(s *Screen) string {
	var b strings.Builder
	cols, rows := s.Size()
	row, col := s.Cursor()
	fmt.Fprintf(&b, "size %d %d\n", cols, rows)
	fmt.Fprintf(&b, "cursor %d %d visible=%v\n", row, col, s.CursorVisible())
	fmt.Fprintf(&b, "modes alt=%v bracketed=%v appcursor=%v\n", s.AltScreen(), s.BracketedPaste(), s.AppCursorKeys())
	fmt.Fprintf(&b, "title %q\n", s.Title())
	fmt.Fprintf(&b, "scrollback %d\n", s.ScrollbackLen())
	for n := -s.ScrollbackLen(); n <= -1; n++ {
		fmt.Fprintf(&b, "%s\n", s.Line(n, false))
	}
	fmt.Fprintf(&b, "screen\n")
	for n := 1; n <= rows; n++ {
		fmt.Fprintf(&b, "%s|\n", s.Line(n, false))
	}
	// Styled lines also pin down the ANSI rendering.
	fmt.Fprintf(&b, "ansi\n")
	for n := -s.ScrollbackLen(); n <= rows; n++ {
		if a := s.Line(n, true); n != 0 && a != s.Line(n, false) {
			fmt.Fprintf(&b, "%d %q\n", n, a)
		}
	}
	return b.String()
}

func goldenNames(t testing.TB) []string {
	bins, err := filepath.Glob(filepath.Join(goldenDir, "*.bin"))
	if err != nil || len(bins) == 0 {
		t.Fatalf("no golden streams in %s (%v)", goldenDir, err)
	}
	for i, b := range bins {
		bins[i] = strings.TrimSuffix(filepath.Base(b), ".bin")
	}
	return bins
}

// TestGolden replays each recorded stream and compares the screen with
// its reviewed golden. The stream is fed whole and again in random small
// chunks: splitting must never change the result.
func TestGolden(t *testing.T) {
	for _, name := range goldenNames(t) {
		t.Run(name, func(t *testing.T) {
			stream, err := os.ReadFile(filepath.Join(goldenDir, name+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			goldenPath := filepath.Join(goldenDir, name+".golden")
			golden, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatal(err)
			}
			cols, rows := goldenSize(t, golden)

			whole := New(cols, rows, Options{})
			whole.Write(stream)
			got := describe(whole)

			rng := rand.New(rand.NewSource(int64(len(stream))))
			chunked := New(cols, rows, Options{})
			for rest := stream; len(rest) > 0; {
				n := 1 + rng.Intn(7)
				if n > len(rest) {
					n = len(rest)
				}
				chunked.Write(rest[:n])
				rest = rest[n:]
			}
			if c := describe(chunked); c != got {
				t.Errorf("chunked replay differs from whole replay:\n%s\n---\n%s", c, got)
			}
			if ansiWhole, ansiChunked := allANSI(whole), allANSI(chunked); ansiWhole != ansiChunked {
				t.Errorf("chunked ANSI rendering differs")
			}

			if *update {
				if err := os.WriteFile(goldenPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(golden) {
				t.Errorf("screen differs from %s (rerun with -update after review):\n%s", goldenPath, lineDiff(string(golden), got))
			}
		})
	}
}

func allANSI(s *Screen) string {
	var b strings.Builder
	_, rows := s.Size()
	for n := -s.ScrollbackLen(); n <= rows; n++ {
		b.WriteString(s.Line(n, true))
		b.WriteByte('\n')
	}
	return b.String()
}

// lineDiff lists the lines that differ, enough to see what changed.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
