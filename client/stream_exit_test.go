//go:build unix

package client

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/proto"
)

// A Send to a sidecar that has exited says how it exited, not only that
// the pipe broke, and every later Send says the same.
func TestStreamSendAfterExitReportsTheExit(t *testing.T) {
	l := newFrameLog()
	s, err := StartStream(exec.Command("/bin/sh", "-c", "exec 0<&-; exit 3"), StreamOptions{Handle: l.handle})
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the stream's end", s.Done())
	frame := proto.AppendFrame(nil, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "x"}))
	err = s.Send(frame)
	if !errors.Is(err, ErrSidecarGone) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Send after the exit: %v, want ErrSidecarGone with its exit status", err)
	}
	if again := s.Send(frame); again == nil || again.Error() != err.Error() {
		t.Fatalf("the next Send: %v, want %v", again, err)
	}
}

// Each EventKind has a name for logs; an unknown one says its number.
func TestEventKindNames(t *testing.T) {
	want := map[EventKind]string{
		EventDisconnected:    "disconnected",
		EventReconnectFailed: "reconnect failed",
		EventLost:            "lost",
		EventReconnected:     "reconnected",
		EventGaveUp:          "gave up",
		EventKind(99):        "EventKind(99)",
	}
	for k, name := range want {
		if got := k.String(); got != name {
			t.Errorf("EventKind %d: %q, want %q", int(k), got, name)
		}
	}
}
