//go:build unix

package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/inherited"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
	"github.com/ptyplex/ptyplex/sidecar/persist"
	"golang.org/x/sys/unix"
)

// Flags of the persistent mode; they mean nothing without --persist.
var (
	persistStop  = flag.Bool("stop", false, "with --persist: end the persistent sidecar and all its terminals (not with --list or --upgrade)")
	persistList  = flag.Bool("list", false, "with --persist: print the persistent sidecar's terminals (not with --stop or --upgrade)")
	persistServe = flag.Bool("serve", false, "with --persist: be the server itself (what --persist starts in the background)")
	journalSize  = flag.Int("journal", persist.DefaultJournal, "with --persist: journal `BYTES` of a terminal whose OPEN names none")
	journalTotal = flag.Int64("journal-total", persist.DefaultTotal, "with --persist: cap `BYTES` on the sum of all terminals' journals")
	keepExited   = flag.Duration("keep-exited", persist.DefaultKeepExited, "with --persist: keep a terminal that exited while detached for `DURATION`")
	// --journal-dir and its two companions: journals on disk too, so that
	// a crash of the server loses no output (see docs/persist.md).
	journalDir    = flag.String("journal-dir", "", "with --persist: keep every terminal's journal on disk too, under `DIR` (0700, ours), so that a crash or a reboot loses no output; the next server lists the terminals dead")
	journalDirMax = flag.Int64("journal-dir-max", persist.DefaultJournalDirMax, "with --journal-dir: bound `BYTES` on the server's files there (dead terminals' go first)")
	journalSync   = flag.Duration("journal-sync", persist.DefaultJournalSync, "with --journal-dir: fsync the files written every `DURATION` (0: never)")
	// The orphan bound and re-adoption (sidecar/persist/orphan.go, readopt.go).
	orphanTimeout = flag.Duration("orphan-timeout", persist.DefaultOrphanTimeout, "with --persist: close (as CLOSE does) a running terminal that no host held for `DURATION`, unless its OPEN says (\"orphanMs\"); 0: never")
	readopt       = flag.Bool("readopt", false, "with --persist: an OPEN for the id of a terminal no host holds gives this host that terminal if it runs the same program (command, args and working directory: OPENED, its screen redrawn as OUTPUT, then its output), or replaces it with a new one if not, instead of refusing the id: for hosts written for the plain sidecar, which reopen their ids")
	// --upgrade hands the terminals to the binary it is run as.
	persistUpgrade = flag.Bool("upgrade", false, "with --persist: hand every terminal of the running persistent sidecar to this binary, which takes its place without the terminals noticing (not with --list or --stop; see docs/persist.md)")
)

// Hidden flags: the handover between two images of a persistent server
// (see sidecar/persist/upgrade.go). They are not in --help: nobody but
// the server itself passes them.
var (
	handoverFormat = flag.Bool("persist-handover-format", false, "print the handover format this binary reads and its version, and exit")
	resumeFD       = flag.Int("resume-fd", -1, "with --persist --serve: take over the state the previous image of this server left at descriptor `N`")
	resumeExe      = flag.Int("resume-exe", -1, "with --resume-fd: the previous image's binary, open at descriptor `N`, to go back to if the state cannot be taken over")
	resumeKeeper   = flag.Int("resume-keeper", -1, "with --persist --serve: take over the state the previous image of this server gave to the keeper whose socket is descriptor `N`")
	// upgradeBinary names another binary than our own for --upgrade:
	// the tests use it to offer the server binaries it must refuse.
	upgradeBinary = flag.String("upgrade-binary", "", "with --upgrade: hand the terminals to the binary at `PATH` instead of this one")
)

// serverFlags are the flags a bridge passes to the server it starts, and
// to no other: a server that runs already keeps its own.
var serverFlags = []string{"journal", "journal-total", "keep-exited", "journal-dir", "journal-dir-max", "journal-sync", "orphan-timeout"}

// serverFlagsSet lists the server flags given on our command line, as
// --name.
func serverFlagsSet() []string {
	var set []string
	flag.Visit(func(f *flag.Flag) {
		if slices.Contains(serverFlags, f.Name) {
			set = append(set, "--"+f.Name)
		}
	})
	return set
}

var hiddenFlags = map[string]bool{"persist-handover-format": true, "resume-fd": true, "resume-exe": true, "resume-keeper": true, "upgrade-binary": true}

// resuming reports whether we were started as the next image of a
// persistent server, before the flags are parsed: the descriptors handed
// over must not be closed as inherited ones.
func resuming(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		for _, f := range []string{"resume-fd", "resume-keeper"} {
			if a == "-"+f || a == "--"+f || strings.HasPrefix(a, "-"+f+"=") || strings.HasPrefix(a, "--"+f+"=") {
				return true
			}
		}
	}
	return false
}

// serverArgs are our arguments without the program name and the hidden
// handover flags: what the next image is started with, before its own.
func serverArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name := strings.TrimLeft(args[i], "-")
		if k, _, ok := strings.Cut(name, "="); ok && hiddenFlags[k] {
			continue
		}
		if hiddenFlags[name] && strings.HasPrefix(args[i], "-") {
			if name != "persist-handover-format" {
				i++ // its value
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// persistMode runs the persistent modes; ok is false when --persist was
// not given (and none of its flags either).
func persistMode() (code int, ok bool) {
	if !persistGiven() {
		if *persistStop || *persistList || *persistServe || *persistUpgrade || *readopt || *resumeFD >= 0 || *resumeKeeper >= 0 {
			fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --stop, --list, --upgrade, --readopt and --serve need --persist NAME")
			return 2, true
		}
		// A server flag alone would start a plain sidecar, which keeps
		// no journal: a user who gave --journal-dir would believe the
		// output safe on disk, and one who gave --orphan-timeout that
		// the terminals outlive the host.
		if set := serverFlagsSet(); len(set) > 0 {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %s: server flags of --persist NAME; a plain sidecar keeps no journal (nothing was done)\n", strings.Join(set, ", "))
			return 2, true
		}
		return 0, false
	}
	if *recordPath != "" {
		fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --record is not available with --persist")
		return 2, true
	}
	// One action at a time: nothing is done when two are asked for.
	var actions []string
	for _, a := range []struct {
		name string
		set  bool
	}{{"--serve", *persistServe}, {"--stop", *persistStop}, {"--list", *persistList}, {"--upgrade", *persistUpgrade}} {
		if a.set {
			actions = append(actions, a.name)
		}
	}
	if len(actions) > 1 {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %s cannot be used together: give one of --list, --stop and --upgrade (nothing was done)\n", strings.Join(actions, " and "))
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
	case *persistUpgrade:
		return upgrade(*persistName), true
	}
	if err := checkServerFlags(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v (nothing was done)\n", err)
		return 2, true
	}
	return bridge(*persistName), true
}

// checkServerFlags refuses the server flags a bridge is given with values
// that mean nothing: the server would take its default instead (a
// --keep-exited 0 kept exited terminals for 24 h), and the user would
// not know. A server is not asked (--serve): one started by an older
// bridge with such a value must still take its flags when a live upgrade
// runs the new binary with them.
func checkServerFlags() error {
	switch {
	case *journalSize < 1 || *journalSize > persist.MaxJournal:
		return fmt.Errorf("--journal %d: a journal is 1 to %d bytes", *journalSize, persist.MaxJournal)
	case *journalTotal < 1:
		return fmt.Errorf("--journal-total %d: the cap on all journals is 1 byte or more", *journalTotal)
	case *keepExited <= 0:
		return fmt.Errorf("--keep-exited %v: an exited terminal is kept for more than 0", *keepExited)
	case *journalDirMax < 1:
		return fmt.Errorf("--journal-dir-max %d: the bound is 1 byte or more", *journalDirMax)
	}
	return nil
}

// serve is the server process.
func serve(name string) int {
	logger := log.New(lineEscaper{os.Stderr}, "ptyplex-sidecar["+name+"]: ", log.LstdFlags|log.Lmicroseconds)
	opts := persist.Options{Log: logger, Journal: *journalSize, Total: *journalTotal, KeepExited: *keepExited,
		OrphanTimeout: *orphanTimeout, Name: name, Args: serverArgs(os.Args[1:]), JournalDir: *journalDir,
		JournalDirMax: *journalDirMax, JournalSync: *journalSync}
	if *orphanTimeout <= 0 {
		opts.OrphanTimeout = -1 // never
	}
	if opts.JournalSync == 0 {
		opts.JournalSync = -1 // never
	}
	var srv *persist.Server
	var ln *net.UnixListener
	if *resumeKeeper >= 0 {
		var ok bool
		if srv, ln, ok = resumeFromKeeper(logger, opts); !ok {
			return 1
		}
	} else if *resumeFD >= 0 {
		// We are the next image of a server that re-executed itself.
		var err error
		srv, ln, err = resume(opts, *resumeFD, nil)
		if err != nil {
			logger.Printf("cannot take over the server's state: %v", err)
			if *resumeExe >= 0 {
				// Nothing was touched: the previous binary takes the
				// state back (without --resume-exe: no way back from it).
				logger.Printf("going back to the previous binary")
				args := append([]string{os.Args[0]}, opts.Args...)
				args = append(args, "--resume-fd", fmt.Sprint(*resumeFD))
				err = persist.ExecPrevious(*resumeExe, args)
				logger.Printf("cannot go back to the previous binary: %v", err)
			}
			// Ending closes the PTY masters: the children get the hangup.
			return 1
		}
		// The previous binary's descriptor, and anything else not taken
		// over (Resume made its own close-on-exec again).
		if _, err := inherited.Close(); err != nil {
			logger.Printf("%v", err)
		}
	} else {
		var err error
		ln, err = persist.Listen(name)
		if errors.Is(err, persist.ErrRunning) {
			// Another bridge started one at the same moment: it serves.
			// Or one is going away (stopping): the bridge that started
			// us starts another once nobody listens.
			logger.Printf("another server of this name holds its lock (one starting, or one going away): leaving it to that one")
			return 0
		}
		if err != nil {
			logger.Printf("%v", err)
			return 1
		}
		srv = persist.New(opts)
	}
	resumed := *resumeKeeper >= 0 || *resumeFD >= 0
	if err := srv.UseJournalDir(resumed); err != nil {
		if !resumed {
			logger.Printf("%v", err)
			ln.Close()
			return 1
		}
		// The terminals were handed over: they go on, unjournaled.
		logger.Printf("%v; going on without it", err)
	}
	// The watchdog kills every terminal's processes if we die without
	// ending them (see sidecar/persist/watchdog.go).
	if err := srv.StartWatchdog(func() (persist.Watchdog, error) { return watchdog.Start(logger.Printf) }); err != nil {
		logger.Printf("running without a watchdog: %v", err)
	}
	// The heap is mostly journal chunks: buffers without pointers, which
	// cost the collector almost nothing to mark, and recycled through a
	// pool rather than left as garbage. A low GOGC keeps what garbage
	// there is (chunks the pool drops at a collection, a terminal's
	// journal once it is gone) from adding to the RSS, for little CPU.
	debug.SetGCPercent(20)
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
		srv.Shutdown()
	}()
	logger.Printf("serving on %s (pid %d)", ln.Addr(), os.Getpid())
	if err := srv.Serve(ln); err != nil {
		logger.Printf("%v", err)
		srv.Shutdown()
		return 1
	}
	// Stop closed the listener before it was done: it ends first.
	srv.Shutdown()
	os.Remove(ln.Addr().String())
	logger.Printf("exiting")
	return 0
}

// resume is persist.Resume with a panic taken for a state it cannot
// read: the caller then goes back to the previous binary, which still
// can, where a panic would end the server and every terminal with it.
func resume(opts persist.Options, stateFD int, fds map[string]int) (srv *persist.Server, ln *net.UnixListener, err error) {
	defer func() {
		if p := recover(); p != nil {
			srv, ln, err = nil, nil, fmt.Errorf("panic while taking the state over: %v", p)
		}
	}()
	if p := os.Getenv(failResumeEnv); p != "" {
		if how, rerr := os.ReadFile(p); rerr == nil && os.Remove(p) == nil {
			switch string(how) {
			case "panic":
				panic("failing once, as " + failResumeEnv + " asks")
			case "exit": // dying as no code of ours can catch
				os.Exit(3)
			}
			return nil, nil, fmt.Errorf("failing once, as %s asks", failResumeEnv)
		}
	}
	return persist.Resume(opts, stateFD, fds)
}

// failResumeEnv names a file whose removal makes the next image of an
// upgrade fail to take the state over, once: the tests' way to the road
// back to the previous binary. If the file says "panic", it fails so; if
// it says "exit", the new image ends there (a death nothing catches).
const failResumeEnv = "PTYPLEX_TEST_FAIL_RESUME"

// resumeFromKeeper takes over the state the previous image gave to its
// keeper (see sidecar/persist/keeper_linux.go). We are non-dumpable
// already (main's first step): the descriptors are the terminals' PTY
// masters and their journals. If the state cannot be taken over, the
// previous binary is executed again with the same keeper; if that fails
// too, we end, the keeper with us, and the children get the hangup.
func resumeFromKeeper(logger *log.Logger, opts persist.Options) (*persist.Server, *net.UnixListener, bool) {
	r, err := persist.Reclaim(*resumeKeeper)
	if err != nil {
		logger.Printf("cannot take the descriptors back from the keeper: %v", err)
		return nil, nil, false
	}
	var srv *persist.Server
	var ln *net.UnixListener
	srv, ln, err = resume(opts, r.FDs["state"], r.FDs)
	if err == nil {
		r.Release()
		if exe, ok := r.FDs["exe"]; ok {
			syscall.Close(exe)
		}
		// Anything else not taken over.
		if _, err := inherited.Close(); err != nil {
			logger.Printf("%v", err)
		}
		return srv, ln, true
	}
	logger.Printf("cannot take over the server's state: %v", err)
	exe, ok := r.FDs["exe"]
	if !ok {
		return nil, nil, false
	}
	logger.Printf("going back to the previous binary")
	for tag, fd := range r.FDs {
		if tag != "exe" {
			syscall.Close(fd)
		}
	}
	args := append([]string{os.Args[0]}, opts.Args...)
	args = append(args, "--resume-keeper", fmt.Sprint(*resumeKeeper))
	err = persist.ExecPrevious(exe, args)
	logger.Printf("cannot go back to the previous binary: %v", err)
	return nil, nil, false
}

// awaitOwnSignal gives our signal handler the last word when the server
// we started died of a signal we catch: we are its parent, and until it
// makes a session of its own it is in our process group, so a signal
// sent to the group then (a Ctrl-C, a hang-up, a host's kill of the
// group) killed it as it started, and reached us too. The handler exits
// 0 with its line, as for that signal at any other moment; we wait for
// it up to ownSignalWait (it did not come: the signal was the server's
// alone) before reporting the failure ourselves. (Before, the failure,
// exit 1, raced the handler's exit line and exit 0.)
func awaitOwnSignal(err error, caught []os.Signal) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || !slices.Contains(caught, os.Signal(ws.Signal())) {
		return
	}
	time.Sleep(ownSignalWait) // the handler exits meanwhile, if the signal was ours too
}

// ownSignalWait bounds awaitOwnSignal's wait.
const ownSignalWait = time.Second

// bridge connects stdin and stdout to the server. It ends when the server
// closes the connection, which it does once our stdin has ended (the host
// went away) and it has detached our terminals.
func bridge(name string) int {
	// A signal that would end us silently (the host's SIGTERM, a closing
	// terminal's SIGHUP) ends us as the end of stdin does, with status 0
	// and a line saying so, as the plain sidecar ends; the terminals stay
	// on the server, detached, which is what --persist is for. (The
	// server sees our end: in a hand-off it ends the host's connection.)
	sigs := make(chan os.Signal, 1)
	caught := []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM} {
		if !signal.Ignored(sig) {
			caught = append(caught, sig)
		}
	}
	signal.Notify(sigs, caught...)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: exiting with status 0: received %s (the terminals stay on the persistent sidecar %q)\n",
			unix.SignalName(sig.(syscall.Signal)), name)
		os.Exit(0)
	}()
	sayWhatWeAre() // only now: it says Ctrl-C ends us, which is true once caught
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		return 1
	}
	args := []string{"--persist", name, "--serve", "--journal", fmt.Sprint(*journalSize),
		"--journal-total", fmt.Sprint(*journalTotal), "--keep-exited", keepExited.String(),
		"--orphan-timeout", orphanTimeout.String()}
	if *journalDir != "" {
		dir, err := filepath.Abs(*journalDir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: --journal-dir: %v\n", err)
			return 1
		}
		args = append(args, "--journal-dir", dir, "--journal-dir-max", fmt.Sprint(*journalDirMax),
			"--journal-sync", journalSync.String())
	}
	growPipe(os.Stdout)
	var c *net.UnixConn
	for try := 1; ; try++ {
		var started bool
		c, started, err = persist.Connect(name, exe, args)
		if err != nil {
			awaitOwnSignal(err, caught)
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
			return 1
		}
		if set := serverFlagsSet(); !started && try == 1 && len(set) > 0 {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar %q runs already, so %s did not apply: server flags take effect only for the bridge that starts it (end it with --stop, or see --list)\n",
				name, strings.Join(set, ", "))
		}
		code, done, err := handOff(c)
		if err == nil {
			if done {
				return code
			}
			break
		}
		c.Close()
		if !closedBeforeAnswer(err) || try == bridgeTries {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar: %v\n", err)
			return 1
		}
		// It was going away as we dialled (killed, crashed, or
		// stopping): the next dial finds it gone and starts a new one.
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar closed the connection before it answered (%v); connecting again\n", err)
	}
	corrupt := make(chan error, 1)
	go func() {
		// The host's stdin ends: half-close, so the server sees the end
		// of our frames and still sends what it has queued. A stream
		// that is not frames ends the same way after its last whole
		// frame, and we exit as a plain sidecar (or the server, for a
		// bridge that handed over) does then: 1, with the reason.
		err := copyFrames(c, pollableStdin())
		if errors.Is(err, proto.ErrCorrupt) {
			corrupt <- err
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the server: %v\n", err)
		}
		c.CloseWrite()
	}()
	if _, err := copyToHost(os.Stdout, c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		// The host stopped reading: our end closes, and the server
		// detaches our terminals. (A reset comes from the server's
		// side, never the host's: it closed the connection with
		// frames of ours unread, stopping or crashing while it held
		// its host's INPUT back. It went away, and we end quietly, as
		// when it goes without a word.)
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the host: %v\n", err)
		return 1
	}
	select {
	case err := <-corrupt:
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: from the host: %v\n", err)
		return 1
	default:
	}
	return 0
}

// copyFrames copies the host's frames from src to the server, each as it
// is read whole (a keystroke waits for nothing): nil at the end of src
// between two frames, an error wrapping proto.ErrCorrupt, after the
// frames before it, when src holds what is not a frame (a zero or
// oversized length, or an end inside a frame). The server would see only
// a clean end of our half of the connection, so the reason is ours to
// give, as it gives it to a bridge that handed the host over.
func copyFrames(dst *net.UnixConn, src io.Reader) error {
	r := proto.NewReader(src)
	r.ReuseBuffer()
	var hdr [proto.HeaderSize]byte
	for {
		f, err := r.ReadFrame()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(hdr[:4], uint32(len(f.Body)+1))
		hdr[4] = byte(f.Type)
		bufs := net.Buffers{hdr[:], f.Body}
		if _, err := bufs.WriteTo(dst); err != nil {
			return err
		}
	}
}
