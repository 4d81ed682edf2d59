package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// Flags of the persistent mode; they mean nothing without --persist.
var (
	persistStop  = flag.Bool("stop", false, "with --persist: end the persistent sidecar and all its terminals")
	persistList  = flag.Bool("list", false, "with --persist: print the persistent sidecar's terminals")
	persistServe = flag.Bool("serve", false, "with --persist: be the server itself (what --persist starts in the background)")
	journalSize  = flag.Int("journal", persist.DefaultJournal, "with --persist: journal `BYTES` of a terminal whose OPEN names none")
	journalTotal = flag.Int64("journal-total", persist.DefaultTotal, "with --persist: cap `BYTES` on the sum of all terminals' journals")
	keepExited   = flag.Duration("keep-exited", persist.DefaultKeepExited, "with --persist: keep a terminal that exited while detached this `long`")
)

// persistMode runs the persistent modes; ok is false when --persist was
// not given (and none of its flags either).
func persistMode() (code int, ok bool) {
	if *persistName == "" {
		if *persistStop || *persistList || *persistServe {
			fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --stop, --list and --serve need --persist NAME")
			return 2, true
		}
		return 0, false
	}
	if *recordPath != "" {
		fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --record is not available with --persist")
		return 2, true
	}
	if err := persist.CheckName(*persistName); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		return 2, true
	}
	switch {
	case *persistServe:
		return serve(*persistName), true
	case *persistStop:
		return stop(*persistName), true
	case *persistList:
		return list(*persistName), true
	}
	return bridge(*persistName), true
}

// serve is the server process.
func serve(name string) int {
	logger := log.New(os.Stderr, "ptyplex-sidecar["+name+"]: ", log.LstdFlags|log.Lmicroseconds)
	ln, err := persist.Listen(name)
	if errors.Is(err, persist.ErrRunning) {
		// Another bridge started one at the same moment: it serves.
		return 0
	}
	if err != nil {
		logger.Printf("%v", err)
		return 1
	}
	// The heap is mostly journals: large buffers without pointers, which
	// cost the collector almost nothing to mark. A low GOGC then keeps the
	// garbage of grown journals (each growth copies) from adding most of
	// the journals' size again to the RSS, for little CPU.
	debug.SetGCPercent(20)
	srv := persist.New(persist.Options{Log: logger, Journal: *journalSize, Total: *journalTotal, KeepExited: *keepExited})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	// Started in a session of its own, it has no terminal to hang up;
	// SIGHUP and SIGPIPE (a host gone mid-write) must not end it.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	go func() {
		select {
		case sig := <-sigs:
			logger.Printf("received %v: ending every terminal", sig)
		case <-srv.Stopped():
			logger.Printf("asked to stop: ending every terminal")
		}
		srv.Stop()
		ln.Close()
	}()
	logger.Printf("serving on %s (pid %d)", ln.Addr(), os.Getpid())
	if err := srv.Serve(ln); err != nil {
		logger.Printf("%v", err)
		srv.Stop()
		return 1
	}
	os.Remove(ln.Addr().String())
	logger.Printf("exiting")
	return 0
}

// bridge connects stdin and stdout to the server. It ends when the server
// closes the connection, which it does once our stdin has ended (the host
// went away) and it has detached our terminals.
func bridge(name string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		return 1
	}
	args := []string{"--persist", name, "--serve", "--journal", fmt.Sprint(*journalSize),
		"--journal-total", fmt.Sprint(*journalTotal), "--keep-exited", keepExited.String()}
	c, err := persist.Connect(name, exe, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		return 1
	}
	growPipe(os.Stdout)
	go func() {
		// The host's stdin ends: half-close, so the server sees the end
		// of our frames and still sends what it has queued.
		if _, err := io.Copy(c, pollableStdin()); err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the server: %v\n", err)
		}
		c.CloseWrite()
	}()
	if _, err := io.Copy(os.Stdout, c); err != nil {
		// The host stopped reading: our end closes, and the server
		// detaches our terminals.
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the host: %v\n", err)
		return 1
	}
	return 0
}

// request sends one frame to a running server and returns the connection.
func request(name string, typ proto.Type) (*net.UnixConn, int) {
	c, err := persist.Dial(name)
	if err != nil {
		if persist.NotRunning(err) {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: no persistent sidecar %q is running\n", name)
			return nil, 1
		}
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		return nil, 1
	}
	if err := proto.WriteFrame(c, typ, []byte("{}")); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		c.Close()
		return nil, 1
	}
	return c, 0
}

func stop(name string) int {
	c, code := request(name, proto.TypeStop)
	if c == nil {
		return code
	}
	defer c.Close()
	// The server closes every connection once its terminals have ended.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: waiting for %q to stop: %v\n", name, err)
		return 1
	}
	return 0
}

func list(name string) int {
	c, code := request(name, proto.TypeList)
	if c == nil {
		return code
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := proto.NewReader(bufio.NewReader(c))
	for {
		f, err := r.ReadFrame()
		if err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: reading the list: %v\n", err)
			return 1
		}
		if f.Type != proto.TypeListed {
			continue
		}
		var l proto.Listed
		if err := json.Unmarshal(f.Body, &l); err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
			return 1
		}
		printList(os.Stdout, l)
		return 0
	}
}

func printList(w io.Writer, l proto.Listed) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPID\tSIZE\tPRODUCED\tJOURNAL FROM\tMODE\tSTATE\tCOMMAND")
	for _, t := range l.Terminals {
		state := "detached"
		if t.Attached {
			state = "attached"
		}
		if t.Exited {
			switch {
			case t.Signal != "":
				state += ", exited (" + t.Signal + ")"
			case t.ExitCode != nil:
				state += fmt.Sprintf(", exited (%d)", *t.ExitCode)
			default:
				state += ", exited"
			}
		}
		cmd := strings.Join(append([]string{t.Cmd}, t.Args...), " ")
		fmt.Fprintf(tw, "%s\t%d\t%dx%d\t%d\t%d\t%s\t%s\t%s\n", printable(t.TerminalID), t.PID, t.Cols, t.Rows,
			t.Produced, t.Start, t.Detached, state, printable(cmd))
	}
	if len(l.Terminals) == 0 {
		fmt.Fprintln(tw, "(no terminals)")
	}
	tw.Flush()
}

// printable quotes text that holds anything a terminal would act on
// (escape sequences, control characters), so a listing cannot repaint
// the screen it is printed on.
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
