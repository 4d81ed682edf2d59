//go:build unix

package sidecar_test

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/ptyplex/ptyplex/client"
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
		// One terminal at a time: the handler counts its OUTPUT and
		// reports the total at its EXIT.
		type end struct {
			n   int
			err error
		}
		n := 0 // the handler's own
		ended := make(chan end, 1)
		s, err := client.StartStream(exec.Command(sidecarBin), client.StreamOptions{ReuseBodies: true, Handle: func(f proto.Frame) error {
			switch f.Type {
			case proto.TypeOutput:
				_, data, _ := proto.ParseData(f.Body)
				n += len(data)
			case proto.TypeExit:
				ended <- end{n: n}
				n = 0
			case proto.TypeError:
				ended <- end{err: fmt.Errorf("%s", f.Body)}
			}
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { s.CloseInput(); <-s.Done() }()
		for i := 0; i < b.N; i++ {
			id := fmt.Sprint("bench", i)
			if err := s.SendJSON(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: floodArgs}); err != nil {
				b.Fatal(err)
			}
			var got end
			select {
			case got = <-ended:
				if got.err != nil {
					b.Fatal(got.err)
				}
			case <-s.ReadDone():
				b.Fatalf("sidecar output ended: %v", s.ReadErr())
			}
			if got.n != benchBytes {
				b.Fatalf("received %d bytes, want %d", got.n, benchBytes)
			}
		}
	})
}
