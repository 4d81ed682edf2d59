package vtstate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
)

// The tracker's cost is measured against the plain copy a reader does of
// every byte into the journal, on the same data in the same run:
// BenchmarkTrack/X/copy is the baseline, /copy+track the same copy and
// the tracker; their ns/op ratio is what tracking adds to the read path
// (the server's whole cost per byte, syscalls included, is larger, so
// the ratio is an upper bound of what it adds there).

// benchStreams: text as a flood writes it (log lines), and the recorded
// full-screen programs of testdata/screen (vim, htop, less, top, dialog),
// each repeated to 64 KiB, the most one PTY read takes.
func benchStreams(b *testing.B) map[string][]byte {
	var tui []byte
	files, _ := filepath.Glob("../../testdata/screen/*.bin")
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		tui = append(tui, d...)
	}
	if len(tui) == 0 {
		b.Fatal("no recorded streams in testdata/screen")
	}
	grow := func(p []byte) []byte {
		return bytes.Repeat(p, 64<<10/len(p)+1)[:64<<10]
	}
	return map[string][]byte{
		"text": grow([]byte("2026-12-06T04:10:00Z INFO request served path=/api/v1/items status=200 bytes=5123\r\n")),
		"tui":  grow(tui),
	}
}

func BenchmarkTrack(b *testing.B) {
	for name, data := range benchStreams(b) {
		dst := make([]byte, len(data))
		b.Run(name+"/copy", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				copy(dst, data)
			}
		})
		// What a screen kept per terminal would cost instead (the
		// design the tracker replaces): the whole emulator on each byte.
		b.Run(name+"/copy+screen", func(b *testing.B) {
			sc := screen.New(80, 24, screen.Options{Scrollback: 256})
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				copy(dst, data)
				sc.Write(dst)
				sc.TakeReplies()
			}
		})
		b.Run(name+"/copy+track", func(b *testing.B) {
			tr := New(80, 24, 256<<10)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				copy(dst, data)
				tr.Write(dst)
				tr.Forget(tr.Offset() - 4<<20)
			}
		})
	}
}
