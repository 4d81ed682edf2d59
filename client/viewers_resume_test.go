//go:build unix

package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// A viewer that reconnects is attached again under a new number, which
// ViewerNumber gives (a holder's HandOver must name it), and the bytes
// the reconnect found gone count in Lost. Both kept their values from
// before the drop: HandOver named a viewer that no longer was, and Lost
// said nothing was lost.
func TestViewerAfterReconnect(t *testing.T) {
	rig := newLocalRig(t, "vr")
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	holderC, err := Persistent("vr", Options{SidecarPath: sidecarBin, Env: rig.env, Stderr: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer holderC.Close()
	held, err := holderC.Open(ctx, OpenOptions{ID: "f", Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; read x; seq 1 100000; exec cat"}, Journal: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	heldOut := drain(held)
	heldOut.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })

	ev := newEvents()
	viewerC := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	viewed, err := viewerC.Attach(ctx, "f", 0, AttachOptions{View: true})
	if err != nil {
		t.Fatal(err)
	}
	before := viewed.ViewerNumber()
	drain(viewed).until(t, "ready", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("ready\r\n")) })

	// The viewer's connection drops and stays down while the program
	// writes far more than the journal holds.
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(viewerC.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	if _, err := held.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	heldOut.until(t, "the flood", func(b []byte, _ error) bool { return bytes.HasSuffix(b, []byte("\r\n100000\r\n")) })
	os.Remove(rig.gate)
	lost := ev.next(t, EventLost, 1)
	ev.next(t, EventReconnected, 1)

	if lost.Lost == 0 || viewed.Lost() != lost.Lost {
		t.Errorf("Lost %d, the reconnect's EventLost %d", viewed.Lost(), lost.Lost)
	}
	list, err := holderC.List(ctx)
	if err != nil || len(list) != 1 || len(list[0].Viewers) != 1 {
		t.Fatalf("List: %+v, %v", list, err)
	}
	now := list[0].Viewers[0].Viewer
	if viewed.ViewerNumber() != now || now == before {
		t.Fatalf("ViewerNumber %d after the reconnect, the server's %d (before the drop %d)", viewed.ViewerNumber(), now, before)
	}
	if err := held.HandOver(viewed.ViewerNumber()); err != nil {
		t.Fatalf("HandOver to the reconnected viewer: %v", err)
	}
}

// HandOver on a reconnecting client that is down fails at once with
// ErrDisconnected and sends nothing: the terminal stays held and viewed as
// it was once the connection is back. Its DETACH used to be queued; the
// wait for the answer gave up after 10 s, and the reconnect then handed
// the terminal over all the same.
func TestHandOverWhileDisconnected(t *testing.T) {
	rig := newLocalRig(t, "hd")
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	ev := newEvents()
	holderC := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	held, err := holderC.Open(ctx, OpenOptions{ID: "h", Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	heldOut := drain(held)
	heldOut.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })
	viewerC, err := Persistent("hd", Options{SidecarPath: sidecarBin, Env: rig.env, Stderr: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer viewerC.Close()
	viewed, err := viewerC.Attach(ctx, "h", 0, AttachOptions{View: true})
	if err != nil {
		t.Fatal(err)
	}

	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(holderC.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	res := make(chan error, 1)
	go func() { res <- held.HandOver(viewed.ViewerNumber()) }()
	select {
	case err := <-res:
		if !errors.Is(err, ErrDisconnected) {
			t.Fatalf("HandOver while disconnected: %v, want ErrDisconnected", err)
		}
	case <-time.After(DefaultOpenTimeout / 2):
		t.Fatal("HandOver while disconnected waited for an answer")
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	// Still the holder: its keys reach the program.
	if _, err := held.Write([]byte("still held\n")); err != nil {
		t.Fatal(err)
	}
	heldOut.until(t, "the echo", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("still held\r\n")) })
	if !viewed.Viewing() {
		t.Fatal("the viewer was handed the terminal")
	}
}
