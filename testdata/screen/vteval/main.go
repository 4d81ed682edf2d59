// This is a separate module (with its own go.mod) so that the main module
// does not depend on charmbracelet/x/vt: it exists only for the evaluation
// recorded in screen/README.md.

// vteval compares charmbracelet/x/vt with ptyplex/screen on the recorded
// golden streams (correctness) and on synthetic and recorded input (speed).
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/ptyplex/ptyplex/screen"
)

// dir holds the recorded streams; run from testdata/screen/vteval.
const dir = ".."

type golden struct {
	cols, rows int
	screen     []string
	row, col   int
}

func parseGolden(path string) golden {
	data, _ := os.ReadFile(path)
	var g golden
	lines := strings.Split(string(data), "\n")
	fmt.Sscanf(lines[0], "size %d %d", &g.cols, &g.rows)
	fmt.Sscanf(lines[1], "cursor %d %d", &g.row, &g.col)
	in := false
	for _, l := range lines {
		if l == "screen" {
			in = true
			continue
		}
		if l == "ansi" {
			break
		}
		if in {
			g.screen = append(g.screen, strings.TrimSuffix(l, "|"))
		}
	}
	return g
}

func vtLines(e *vt.Emulator, cols, rows int) []string {
	var out []string
	for y := 0; y < rows; y++ {
		var b strings.Builder
		for x := 0; x < cols; {
			c := e.CellAt(x, y)
			if c == nil || c.Content == "" {
				b.WriteByte(' ')
				x++
				continue
			}
			b.WriteString(c.Content)
			x += max(c.Width, 1)
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

func newVT(cols, rows int) *vt.Emulator {
	e := vt.NewEmulator(cols, rows)
	go io.Copy(io.Discard, e) // replies must be drained or Write blocks
	return e
}

func main() {
	bins, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	bad := 0
	fmt.Println("| stream | lines differing (of rows) | cursor |")
	fmt.Println("|---|---|---|")
	for _, bin := range bins {
		name := strings.TrimSuffix(filepath.Base(bin), ".bin")
		g := parseGolden(filepath.Join(dir, name+".golden"))
		stream, _ := os.ReadFile(bin)
		e := newVT(g.cols, g.rows)
		e.Write(stream)
		got := vtLines(e, g.cols, g.rows)
		diff := 0
		for i := range g.rows {
			if got[i] != g.screen[i] {
				diff++
				if os.Getenv("VERBOSE") != "" {
					fmt.Printf("  %s %d\n   want %q\n   got  %q\n", name, i+1, g.screen[i], got[i])
				}
			}
		}
		p := e.CursorPosition()
		cur := "same"
		if p.Y != g.row || p.X != g.col {
			cur = fmt.Sprintf("%d,%d vs %d,%d", p.Y, p.X, g.row, g.col)
		}
		if diff > 0 || cur != "same" {
			bad++
		}
		fmt.Printf("| %s | %d/%d | %s |\n", name, diff, g.rows, cur)
	}
	fmt.Printf("mismatching goldens: %d of %d\n\n", bad, len(bins))

	var all []byte
	for _, bin := range bins {
		d, _ := os.ReadFile(bin)
		all = append(all, d...)
	}
	all = append(all, "\x1b[?1049l\x1bc"...)
	inputs := []struct {
		name string
		data []byte
	}{
		{"plain", plainText()},
		{"colour", colorText()},
		{"all recorded", bytes.Repeat(all, (4<<20)/len(all)+1)},
	}
	fmt.Println("| input | ptyplex/screen MiB/s | x/vt MiB/s |")
	fmt.Println("|---|---|---|")
	for _, in := range inputs {
		// Interleave and keep the best of several rounds: the machine is shared.
		var ours, theirs float64
		for round := 0; round < 5; round++ {
			s := screen.New(80, 24, screen.Options{})
			ours = max(ours, measure(in.data, func(p []byte) { s.Write(p); s.TakeReplies() }))
			e := newVT(80, 24)
			theirs = max(theirs, measure(in.data, func(p []byte) { e.Write(p) }))
		}
		fmt.Printf("| %s | %.0f | %.1f |\n", in.name, ours, theirs)
	}
}

func measure(data []byte, write func([]byte)) float64 {
	start := time.Now()
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 64<<10)
		write(rest[:n])
		rest = rest[n:]
	}
	return float64(len(data)) / (1 << 20) / time.Since(start).Seconds()
}

func plainText() []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 4<<20; i++ {
		fmt.Fprintf(&buf, "%6d the quick brown fox jumps over the lazy dog, again and again %d\r\n", i, i*7)
	}
	return buf.Bytes()
}

func colorText() []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 4<<20; i++ {
		fmt.Fprintf(&buf, "\x1b[1;%dm%-8s\x1b[0m \x1b[38;5;%dmsize\x1b[0m \x1b[38;2;%d;%d;%dm%6d\x1b[0m \x1b[4;%dmname.go\x1b[24;39m ok\r\n",
			31+i%7, "file", i%256, i%256, (i*3)%256, (i*7)%256, i, 90+i%8)
	}
	return buf.Bytes()
}
