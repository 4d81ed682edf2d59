//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/persist"
	"golang.org/x/sys/unix"
)

// persistAttach is `ptyplex attach --persist NAME --id ID`: the user's
// terminal shows a terminal of the persistent sidecar NAME, as its holder
// (keys go to the program; whoever held it is detached) or, with --view,
// as one more viewer (output only; the holder keeps it).
type persistAttach struct {
	name, id  string
	view      bool
	resize    bool
	detachKey byte
	filter    termfilter.Options
}

func (p persistAttach) run() int {
	in := int(os.Stdin.Fd())
	saved, err := unix.IoctlGetTermios(in, ioctlGetTermios)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: attach needs a terminal on stdin: %v\n", err)
		return exitFail
	}
	// Dial, not client.Persistent: attaching never starts a server.
	nc, err := persist.Dial(p.name)
	if err != nil {
		if persist.NotRunning(err) {
			// Not describe's hint, which is about sessions.
			fmt.Fprintf(os.Stderr, "Error: no persistent sidecar %q is running: a host starts it by running 'ptyplex-sidecar --persist %s' as its sidecar (attach never starts one; see docs/persist.md)\n", p.name, p.name)
			return exitFail
		}
		printError(err)
		return exitFail
	}
	c := client.Connect(nc, nc)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// From offset 0: the journal's whole content when it still has it
	// (the scrollback), else the server's repaint of the screen.
	t, err := c.Attach(ctx, p.id, 0, client.AttachOptions{View: p.view})
	if err != nil {
		printError(fmt.Errorf("attach terminal %q of persistent sidecar %q: %w", p.id, p.name, err))
		return exitFail
	}
	if p.resize && !p.view {
		stop := followSize(func(cols, rows uint16) { t.Resize(cols, rows) })
		defer stop()
	}
	if err := makeRaw(in, saved); err != nil {
		fmt.Fprintf(os.Stderr, "Error: cannot put the terminal in raw mode: %v\n", err)
		return exitFail
	}
	why := p.copy(t)
	unix.IoctlSetTermios(in, ioctlSetTermios, saved)
	rows := 1
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Row > 0 {
		rows = int(ws.Row)
	}
	fmt.Printf("\x1b[?1049l%s\x1b[%d;1H\r\n", terminalReset, rows)
	as := "as its holder"
	if p.view {
		as = "as a viewer"
	}
	switch why {
	case endDetached:
		t.Detach()
		fmt.Printf("[detached from terminal %s of persistent sidecar %s (%s); it keeps running]\r\n", p.id, p.name, as)
	case endSignal:
		fmt.Printf("[attach ended by a signal; terminal %s keeps running]\r\n", p.id)
	default:
		st, err := t.Wait()
		switch {
		case errors.Is(err, client.ErrDetached):
			fmt.Printf("[terminal %s: %v]\r\n", p.id, err)
		case err != nil:
			fmt.Printf("[terminal %s: %v]\r\n", p.id, err)
		default:
			fmt.Printf("[the program exited with code %d]\r\n", st.Code)
		}
	}
	return exitOK
}

// copy shows the terminal's output (its repaint first, if the journal
// had lost bytes) and sends the user's keys (a viewer's go nowhere), until
// the user detaches, the terminal ends or a signal comes.
func (p persistAttach) copy(t *client.Terminal) int {
	out := termfilter.NewWriter(os.Stdout, p.filter)
	return attachLoop(func() {
		if _, lost, snap := t.Replay(); lost > 0 {
			io.WriteString(out, snap)
		}
		io.Copy(out, t)
	}, func(b []byte) error {
		if _, err := t.Write(b); err != nil && !errors.Is(err, client.ErrViewing) {
			return err
		}
		return nil
	}, p.detachKey)
}

// checkPersistID refuses a terminal id the protocol would refuse.
func checkPersistID(id string) error {
	if id == "" {
		return errors.New("--persist needs --id, the terminal's id (ptyplex-sidecar --persist NAME --list shows them)")
	}
	if err := proto.CheckID(id); err != nil {
		return fmt.Errorf("--id: %w", err)
	}
	return nil
}
