package sidecar_test

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/ptyplex/ptyplex/proto"
)

// benchBytes is what each iteration pushes from a child through a PTY.
const benchBytes = 64 << 20

var floodArgs = []string{"-c", fmt.Sprintf("stty raw -echo; head -c %d /dev/zero", benchBytes)}

// BenchmarkThroughput compares a host reading the child's PTY directly (the
// ceiling) with the same child's bytes arriving as OUTPUT frames through
// the sidecar. Compare the two MB/s figures of one run: the budget is a
// sidecar/raw ratio of at least 0.90.
func BenchmarkThroughput(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(benchBytes)
		buf := make([]byte, 64<<10)
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("/bin/sh", floodArgs...)
			f, err := pty.Start(cmd)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				m, err := f.Read(buf)
				n += m
				if err != nil {
					if !errors.Is(err, syscall.EIO) && err != io.EOF {
						b.Fatal(err)
					}
					break
				}
			}
			f.Close()
			cmd.Wait()
			if n != benchBytes {
				b.Fatalf("read %d bytes, want %d", n, benchBytes)
			}
		}
	})
	b.Run("sidecar", func(b *testing.B) {
		b.SetBytes(benchBytes)
		cmd := exec.Command(sidecarBin)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		r := proto.NewReader(out)
		r.ReuseBuffer()
		for i := 0; i < b.N; i++ {
			id := fmt.Sprint("bench", i)
			open := proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: floodArgs}
			if _, err := in.Write(proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(open))); err != nil {
				b.Fatal(err)
			}
			n := 0
		frames:
			for {
				f, err := r.ReadFrame()
				if err != nil {
					b.Fatal(err)
				}
				switch f.Type {
				case proto.TypeOutput:
					_, data, _ := proto.ParseData(f.Body)
					n += len(data)
				case proto.TypeExit:
					break frames
				case proto.TypeError:
					b.Fatalf("%s", f.Body)
				}
			}
			if n != benchBytes {
				b.Fatalf("received %d bytes, want %d", n, benchBytes)
			}
		}
	})
}
