//go:build unix

package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// A viewer that reads nothing while the holder floods falls out of the
// terminal's journal: the server skips it forward to a SNAPSHOT. Its
// Read then gives what it had buffered, the repaint, and the rest of the
// stream to the end, Lost counts the skipped bytes, and its Offset ends
// where the holder's does. The holder then Detaches: its Read ends with
// ErrDetached and List shows the terminal without a holder.
func TestPersistentViewerSkippedToSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := persistEnv(t, "s")
	c1, err := Persistent("s", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	const flood = 4 << 20
	held, err := c1.Open(ctx, OpenOptions{ID: "f", Cmd: "/bin/sh", Journal: 64 << 10, Args: []string{"-c",
		"stty -echo; echo ready; read x; head -c 4194304 /dev/zero | tr '\\0' a; echo; echo done-marker; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	hr := bufio.NewReader(held)
	if line, err := hr.ReadString('\n'); err != nil || line != "ready\r\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	c2, err := Persistent("s", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	viewed, err := c2.Attach(ctx, "f", 0, AttachOptions{View: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	// The holder reads the whole flood; the viewer reads nothing yet.
	var hout []byte
	for !bytes.Contains(hout, []byte("done-marker\r\n")) {
		b := make([]byte, 64<<10)
		n, err := hr.Read(b)
		if err != nil {
			t.Fatalf("holder after %d bytes: %v", len(hout), err)
		}
		hout = append(hout, b[:n]...)
	}
	// One more 'a' is done-marker's.
	if got := bytes.Count(hout, []byte("a")) - 1; got != flood {
		t.Fatalf("holder read %d of the %d flooded bytes", got, flood)
	}

	var vout []byte
	vr := bufio.NewReader(viewed)
	for !bytes.Contains(vout, []byte("done-marker\r\n")) {
		b := make([]byte, 64<<10)
		n, err := vr.Read(b)
		if err != nil {
			t.Fatalf("viewer after %d bytes: %v", len(vout), err)
		}
		vout = append(vout, b[:n]...)
	}
	if !strings.HasPrefix(string(vout), "ready\r\n") {
		t.Fatalf("the viewer's stream begins %q", vout[:min(len(vout), 40)])
	}
	if viewed.Lost() == 0 {
		t.Fatal("Lost is 0 for a viewer that fell out of a 64 KiB journal")
	}
	// The viewer read less than the whole flood: what it lost was never
	// sent to it.
	if got := bytes.Count(vout, []byte("a")) - 1; got >= flood {
		t.Fatalf("the skipped viewer read %d bytes of the flood (lost %d)", got, viewed.Lost())
	}
	if hoff := held.Offset() - uint64(hr.Buffered()); viewed.Offset()-uint64(vr.Buffered()) != hoff {
		t.Fatalf("viewer Offset %d, holder %d", viewed.Offset()-uint64(vr.Buffered()), hoff)
	}

	if err := held.Detach(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, hr); !errors.Is(err, ErrDetached) {
		t.Fatalf("the holder's Read after Detach: %v, want ErrDetached", err)
	}
	list, err := c2.List(ctx)
	if err != nil || len(list) != 1 || list[0].Attached || len(list[0].Viewers) != 1 {
		t.Fatalf("List after Detach: %+v, %v", list, err)
	}
}
