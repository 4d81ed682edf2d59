//go:build !windows

package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// trapper traps SIGINT and SIGUSR1 and says so for each; SIGTERM ends it.
// It waits with the wait builtin, which a trapped signal interrupts.
var trapper = OpenOptions{Cmd: "/bin/sh", Args: []string{"-c",
	`trap 'echo got INT' INT; trap 'echo got USR1' USR1; stty -echo; echo ready; while :; do sleep 5 & wait $!; done`}}

// signalTrapper runs the signals of the plain and the persistent sidecar's
// tests on term: caught ones reach the program, an unknown name is the
// sidecar's refusal and changes nothing, SIGTERM ends the program and Wait
// says so, and a Signal after the end fails.
func signalTrapper(t *testing.T, term *Terminal, out *output) {
	t.Helper()
	out.waitText(t, "ready\r\n")
	require.NoError(t, term.Signal("SIGINT"))
	out.waitText(t, "got INT\r\n")
	require.NoError(t, term.Signal("usr1"), "a name without SIG, in lower case")
	out.waitText(t, "got USR1\r\n")

	err := term.Signal("SIGNOPE")
	var se *SignalError
	require.ErrorAs(t, err, &se, "an unknown name: %v", err)
	require.Equal(t, term.ID(), se.TerminalID)
	require.Equal(t, "SIGNOPE", se.Signal)
	require.Contains(t, se.Message, "SIGNOPE")
	t.Logf("refused: %v", err)
	require.Error(t, term.Signal(" "), "no name")
	// The refusals changed nothing: the program still runs and traps.
	require.NoError(t, term.Signal("2"), "a number")
	out.waitFor(t, "a second INT", func(s string, _ error) bool { return strings.Count(s, "got INT") == 2 })

	require.NoError(t, term.Signal("SIGTERM"))
	st, err := term.Wait()
	require.NoError(t, err)
	require.Equal(t, ExitStatus{Code: 143, Signal: "SIGTERM"}, st)

	err = term.Signal("SIGINT")
	require.Error(t, err, "a Signal after the end")
	require.Contains(t, err.Error(), "exited")
}

// Signal delivers signals to a terminal's program through a real sidecar.
func TestSignal(t *testing.T) {
	c := startClient(t)
	term := open(t, c, trapper)
	signalTrapper(t, term, collect(term))
}

// The same through a persistent server, on a terminal this client opened
// and on one another client took over with Attach (whose ATTACHED lists
// no features).
func TestSignalPersistent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	env := persistEnv(t, "sig")
	c1, err := Persistent("sig", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	require.NoError(t, err)
	defer c1.Close()
	o := trapper
	o.ID = "opened"
	term := open(t, c1, o)
	signalTrapper(t, term, collect(term))

	o.ID = "attached"
	first := open(t, c1, o)
	collect(first).waitText(t, "ready\r\n")
	c2, err := Persistent("sig", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	require.NoError(t, err)
	defer c2.Close()
	_, ok := c2.Peer()
	require.False(t, ok, "no handshake: the features are not the HELLO's")
	t2, err := c2.Attach(ctx, "attached", 0)
	require.NoError(t, err)
	signalTrapper(t, t2, collect(t2))
	// The first holder lost it: its Signal says why.
	<-first.Done()
	err = first.Signal("SIGINT")
	require.ErrorIs(t, err, ErrDetached)
}

// A sidecar that lists no "signal" among OPENED's features (an older one,
// which would drop the frame unread) gets none: Signal says it is not
// supported rather than pretend it was delivered.
func TestSignalUnsupported(t *testing.T) {
	c, err := startHostile(t, "old", false)
	require.NoError(t, err)
	term := open(t, c, OpenOptions{Cmd: "sh"})
	err = term.Signal("SIGINT")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	t.Logf("%v", err)
}

// A reconnecting client's Signal while down fails with ErrDisconnected and
// sends nothing; after the reconnect, Signal waits for the new
// connection's answers, not the dead one's.
func TestSignalAcrossReconnect(t *testing.T) {
	rig := newLocalRig(t, "sigdown")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	term, err := c.Open(ctx, trapper)
	require.NoError(t, err)
	out := drain(term)
	out.until(t, "ready", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("ready\r\n")) })
	require.NoError(t, term.Signal("SIGINT"))
	out.until(t, "the first INT", func(b []byte, _ error) bool { return bytes.Count(b, []byte("got INT")) == 1 })

	os.WriteFile(rig.gate, nil, 0o600)
	require.NoError(t, syscall.Kill(c.Pid(), syscall.SIGKILL))
	ev.next(t, EventDisconnected, 1)
	err = term.Signal("SIGINT")
	require.ErrorIs(t, err, ErrDisconnected, "Signal while down")
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)

	require.NoError(t, term.Signal("SIGUSR1"))
	out.until(t, "USR1 after the reconnect", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("got USR1")) })
	require.NoError(t, term.Signal("SIGTERM"))
	st, err := term.Wait()
	require.NoError(t, err)
	require.Equal(t, "SIGTERM", st.Signal)
	if n := bytes.Count(out.bytes(), []byte("got INT")); n != 1 {
		t.Errorf("%d INTs arrived; the one Signal refused while down must not", n)
	}
}
