//go:build unix

package screen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// benchWrite feeds data to one screen in 64 KiB chunks, as the session
// daemon's PTY reader would, and reports throughput.
func benchWrite(b *testing.B, data []byte) {
	b.Helper()
	s := New(80, 24, Options{})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 64<<10)
			s.Write(rest[:n])
			rest = rest[n:]
		}
		s.TakeReplies()
	}
	// Wall-clock MB/s suffers when the machine is shared; throughput per
	// CPU-second of this process is the steadier figure.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/(1<<20)/cpu.Seconds(), "MiB/cpu-s")
	}
}

// cpuTime is the user+system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

// recorded concatenates recorded streams, repeated to at least 1 MiB.
func recorded(b *testing.B, names ...string) []byte {
	var one []byte
	for _, n := range names {
		d, err := os.ReadFile(filepath.Join(goldenDir, n+".bin"))
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, d...)
	}
	// Reset between repetitions so each replay starts from a clean screen.
	one = append(one, "\x1b[?1049l\x1bc"...)
	return bytes.Repeat(one, (1<<20)/len(one)+1)
}

func BenchmarkScreenPlain(b *testing.B) { benchWrite(b, plainText()) }
func BenchmarkScreenColor(b *testing.B) { benchWrite(b, colorText()) }
func BenchmarkScreenVim(b *testing.B)   { benchWrite(b, recorded(b, "vim-edit")) }
func BenchmarkScreenTop(b *testing.B)   { benchWrite(b, recorded(b, "top-interactive", "top-batch")) }
func BenchmarkScreenLess(b *testing.B)  { benchWrite(b, recorded(b, "less")) }
func BenchmarkScreenAllRecorded(b *testing.B) {
	benchWrite(b, recorded(b, goldenNames(b)...))
}

// BenchmarkRawPTYRead measures how fast bytes can be read from a PTY at
// all on this machine (64 MiB of zeros from head, 64 KiB reads): the
// ceiling the emulator has to stay above.
func BenchmarkRawPTYRead(b *testing.B) {
	const total = 64 << 20
	if _, err := exec.LookPath("head"); err != nil {
		b.Skip("head not found")
	}
	b.SetBytes(total)
	buf := make([]byte, 64<<10)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("head", "-c", fmt.Sprint(total), "/dev/zero")
		f, err := pty.Start(cmd)
		if err != nil {
			b.Skipf("no pty: %v", err)
		}
		got := 0
		for {
			n, err := f.Read(buf)
			got += n
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) {
					b.Fatal(err)
				}
				break
			}
		}
		f.Close()
		cmd.Wait()
		if got != total {
			b.Fatalf("read %d of %d bytes", got, total)
		}
	}
}
