package ptyhost

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows backend runs each child on a pseudo-console (ConPTY): the
// child sees a console, we see two pipes carrying VT sequences, input
// and output. The child and everything it starts are in a job object
// that kills its members when its last handle closes, so CLOSE, a kill
// and our own death (the kernel closes our handles) all end the whole
// tree; it does on Windows what the watchdog does on Unix.

const backendName = "conpty"

// Backend names the compiled-in backend: "conpty" on Windows.
func Backend() string { return backendName }

// ErrNotSupported answers what a pseudo-console has no meaning for:
// foreground process groups, signals with no Windows counterpart.
var ErrNotSupported = errors.New("not supported on Windows")

// ErrNoForeground reports a terminal without a foreground process group;
// on Windows there never is one to report.
var ErrNoForeground = ErrNotSupported

// pipeSize is the buffer the output and input pipes ask for. A larger
// output buffer lets conhost run ahead of a busy reader.
const pipeSize = 256 << 10

// Output drain after the child's exit: the pseudo-console is closed (which
// ends our output pipe) once no output arrived for drainQuiet, or after
// drainMax at most. Conhost renders what the child wrote asynchronously,
// and closing it sooner may lose the last screenful; a console program's
// last write has reached conhost when it exits, so a short quiet spell
// means conhost has passed it on.
const (
	drainQuiet = 30 * time.Millisecond
	drainMax   = 2 * time.Second
)

// Process is one child running on its own pseudo-console. Read, Write,
// Resize and Signal may be called from different goroutines.
type Process struct {
	pid  int
	proc windows.Handle // the child's process handle, closed by watch once it exited
	job  windows.Handle // holds the child's tree; kills it on close
	in   *os.File       // our end of the console's input pipe
	out  *os.File       // our end of the console's output pipe
	hpc  windows.Handle // the pseudo-console
	// ctrlC, on the launcher path (Wine), is the semaphore the launcher
	// turns into a ^C on the console; 0x03 never goes into the input
	// pipe there (see launcher_windows.go).
	ctrlC       windows.Handle
	ctrlMu      sync.Mutex // guards ctrlC's closing (ctrlC is 0 once closed)
	useCtrl     bool       // ctrlC was made: the launcher path
	inMu        sync.Mutex // orders the pieces of a Write split at ^C
	consoleOnce sync.Once
	consoleDone chan struct{} // closed once ClosePseudoConsole returned

	// eof is closed when Read met the output pipe's end; orphaned says
	// the pseudo-console is gone but its output pipe did not end (see
	// orphanBound), and orphanMu orders that with the read deadline.
	eof      chan struct{}
	eofOnce  sync.Once
	orphanMu sync.Mutex
	orphaned atomic.Bool

	exited    chan struct{} // closed when the child's handle signalled
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	lastOut   atomic.Int64 // UnixNano of the last output read
	killedBy  atomic.Int32 // the signal whose meaning ended the tree, if any

	// sizeMu guards the size and consoleGone, and is held across a call
	// of ResizePseudoConsole: the HPCON is a pointer to memory that
	// ClosePseudoConsole frees, so a resize must neither follow the
	// close nor run beside it.
	sizeMu      sync.Mutex
	cols, rows  int
	consoleGone bool

	reapOnce sync.Once
	status   Status
	reapErr  error

	// The child's exit code, read by watch before it closes proc and
	// then exited; codeErr if it could not be read.
	code    uint32
	codeErr error
}

// Start runs cfg.Cmd on a new pseudo-console in a new job object.
func Start(cfg Config) (*Process, error) {
	env := cfg.environWindows()
	path, err := resolveWindows(cfg.Cmd, env, cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", cfg.Cmd, err)
	}
	if cfg.Dir != "" {
		fi, err := os.Stat(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("cwd %s: %w", cfg.Dir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("cwd %s is not a directory", cfg.Dir)
		}
	}
	app, cmdline := path, windows.ComposeCommandLine(append([]string{cfg.Cmd}, cfg.Args...))
	if cfg.CmdLine != "" {
		if len(cfg.Args) > 0 {
			return nil, fmt.Errorf("cannot start %s: a command line and arguments cannot both be given", cfg.Cmd)
		}
		if isBatch(path) {
			return nil, fmt.Errorf("cannot start %s: %w", cfg.Cmd, errBatchCmdLine)
		}
		// The program's name as with args (the same argv[0]), the rest
		// as the caller wrote it: node-pty's line for args as a string.
		cmdline = windows.ComposeCommandLine([]string{cfg.Cmd}) + " " + cfg.CmdLine
	}
	if isBatch(path) {
		if app, cmdline, err = batchCommandLine(path, cfg.Args); err != nil {
			return nil, fmt.Errorf("cannot start %s: %w", cfg.Cmd, err)
		}
	}
	p, err := startConsole(app, cmdline, cfg.Dir, env, cfg.Cols, cfg.Rows)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", cfg.Cmd, err)
	}
	return p, nil
}

func startConsole(path, cmdline, dir string, env []string, cols, rows int) (_ *Process, err error) {
	var inR, inW windows.Handle
	if err := windows.CreatePipe(&inR, &inW, nil, pipeSize); err != nil {
		return nil, fmt.Errorf("input pipe: %w", err)
	}
	out, outW, err := outputPipe()
	if err != nil {
		windows.CloseHandle(inR)
		windows.CloseHandle(inW)
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	p := &Process{
		in:          os.NewFile(uintptr(inW), "conpty-input"),
		out:         out,
		eof:         make(chan struct{}),
		consoleDone: make(chan struct{}),
		exited:      make(chan struct{}),
		closed:      make(chan struct{}),
		cols:        int(clampSize(cols)),
		rows:        int(clampSize(rows)),
	}
	// The console has its own copies of its ends of the pipes.
	defer windows.CloseHandle(inR)
	defer windows.CloseHandle(outW)
	size := windows.Coord{X: int16(min(p.cols, 32767)), Y: int16(min(p.rows, 32767))}
	if err := windows.CreatePseudoConsole(size, inR, outW, 0, &p.hpc); err != nil {
		p.in.Close()
		p.out.Close()
		return nil, fmt.Errorf("CreatePseudoConsole: %w", err)
	}
	defer func() {
		if err != nil {
			p.closeConsole()
			p.in.Close()
			p.out.Close()
		}
	}()
	if p.job, err = newKillJob(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			windows.CloseHandle(p.job)
		}
	}()
	app, line := path, cmdline
	var extraEnv []string
	var started windows.Handle // the launcher's started event
	if useLauncher() {
		// Wine does not give a pseudo-console's child the console as its
		// standard handles: a copy of ourselves, started on the console,
		// opens CONIN$ and CONOUT$ and starts the program with them.
		// Not err: the deferred closes below look at what Start returns.
		self, lerr := os.Executable()
		if lerr != nil {
			return nil, fmt.Errorf("launcher: %w", lerr)
		}
		sem, name, lerr := newCtrlCSemaphore()
		if lerr != nil {
			return nil, fmt.Errorf("launcher: %w", lerr)
		}
		p.ctrlC, p.useCtrl = sem, true
		defer func() {
			if err != nil {
				windows.CloseHandle(sem)
			}
		}()
		ev, evName, lerr := newStartedEvent()
		if lerr != nil {
			return nil, fmt.Errorf("launcher: %w", lerr)
		}
		started = ev
		defer windows.CloseHandle(started)
		app, line = self, windows.ComposeCommandLine([]string{self})
		extraEnv = []string{launchEnv + "=1", launchAppEnv + "=" + path, launchLineEnv + "=" + cmdline,
			launchCtrlCEnv + "=" + name, launchStartedEnv + "=" + evName}
	}
	pi, err := createOnConsole(app, line, dir, append(env, extraEnv...), p.hpc)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(pi.Thread)
	if err := windows.AssignProcessToJobObject(p.job, pi.Process); err != nil {
		windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return nil, fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	if _, err := windows.ResumeThread(pi.Thread); err != nil {
		windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return nil, fmt.Errorf("ResumeThread: %w", err)
	}
	if started != 0 {
		if err := awaitLauncher(started, pi.Process, path); err != nil {
			windows.CloseHandle(pi.Process)
			return nil, err
		}
	}
	p.pid, p.proc = int(pi.ProcessId), pi.Process
	p.lastOut.Store(time.Now().UnixNano())
	go p.watch()
	return p, nil
}

// newKillJob makes a job object whose members die when its last handle
// closes.
func newKillJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	return job, nil
}

// createOnConsole starts app suspended on the pseudo-console hpc.
func createOnConsole(app, cmdline, dir string, env []string, hpc windows.Handle) (*windows.ProcessInformation, error) {
	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return nil, fmt.Errorf("NewProcThreadAttributeList: %w", err)
	}
	defer attrs.Delete()
	// The attribute's value is the HPCON itself, not a pointer to one.
	if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, *(*unsafe.Pointer)(unsafe.Pointer(&hpc)), unsafe.Sizeof(hpc)); err != nil {
		return nil, fmt.Errorf("UpdateProcThreadAttribute: %w", err)
	}
	si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	// Standard handles set, and set to none: otherwise a child inherits
	// ours (the host's frame pipes) instead of taking the console's.
	si.Flags = windows.STARTF_USESTDHANDLES
	appW, err := windows.UTF16PtrFromString(app)
	if err != nil {
		return nil, err
	}
	lineW, err := windows.UTF16PtrFromString(cmdline)
	if err != nil {
		return nil, err
	}
	var dirW *uint16
	if dir != "" {
		if dirW, err = windows.UTF16PtrFromString(dir); err != nil {
			return nil, err
		}
	}
	block, err := envBlock(env)
	if err != nil {
		return nil, err
	}
	pi := &windows.ProcessInformation{}
	flags := uint32(windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_UNICODE_ENVIRONMENT | windows.CREATE_SUSPENDED)
	if err := windows.CreateProcess(appW, lineW, nil, nil, false, flags, &block[0], dirW, &si.StartupInfo, pi); err != nil {
		return nil, fmt.Errorf("CreateProcess %s: %w", app, err)
	}
	return pi, nil
}

// envBlock is env as CreateProcess takes it: NUL-separated UTF-16,
// ending in two NULs.
func envBlock(env []string) ([]uint16, error) {
	var b []uint16
	for _, kv := range env {
		u, err := windows.UTF16FromString(kv)
		if err != nil {
			return nil, fmt.Errorf("environment entry %q: %w", kv, err)
		}
		b = append(b, u...) // u ends in its NUL
	}
	if len(b) == 0 {
		b = append(b, 0)
	}
	return append(b, 0), nil
}

// watch waits for the child to exit, then lets the output drain and
// closes the pseudo-console, which ends the output pipe: the reader
// sees EOF only after the last byte conhost rendered. The child's exit
// code is all that is needed of it once it exited: its handle is closed
// here, or the process object would stay for as long as we run, one per
// terminal ever opened (nothing signals by pid on Windows; the job holds
// the tree).
func (p *Process) watch() {
	windows.WaitForSingleObject(p.proc, windows.INFINITE)
	if err := windows.GetExitCodeProcess(p.proc, &p.code); err != nil {
		p.codeErr = fmt.Errorf("GetExitCodeProcess: %w", err)
	}
	windows.CloseHandle(p.proc)
	close(p.exited)
	deadline := time.Now().Add(drainMax)
	for {
		quiet := time.Since(time.Unix(0, p.lastOut.Load()))
		if quiet >= drainQuiet || time.Now().After(deadline) {
			break
		}
		select {
		case <-time.After(drainQuiet - quiet):
		case <-p.closed:
			p.closeConsole()
			return
		}
	}
	p.closeConsole()
}

// closeConsole closes the pseudo-console once. Older Windows builds block
// in ClosePseudoConsole until the output pipe is drained, so the reader
// must go on reading meanwhile (it does: nothing waits for this).
func (p *Process) closeConsole() {
	p.consoleOnce.Do(func() {
		go func() {
			// From here on hpc is no console of ours: Resize, which may
			// come until the terminal's EXIT (a reader parked on credit
			// keeps it from EOF for as long as the host likes), must not
			// hand the freed HPCON to ResizePseudoConsole, which would
			// write its resize packet through whatever the freed memory
			// then holds (the next terminal's console often gets the
			// same block).
			p.sizeMu.Lock()
			p.consoleGone = true
			p.sizeMu.Unlock()
			windows.ClosePseudoConsole(p.hpc)
			close(p.consoleDone)
			p.watchOrphan()
		}()
	})
}

// Pid is the child's process id. Under Wine that is the launcher's, the
// child's parent, which ends with the child's exit code.
func (p *Process) Pid() int { return p.pid }

// TTY names the pseudo-console; Windows gives it no path.
func (p *Process) TTY() string { return fmt.Sprintf("conpty:%d", p.pid) }

// TryRead returns nothing on Windows, where a read of the output pipe
// cannot be made not to wait: a caller reads ahead only on Unix.
func (p *Process) TryRead(b []byte) (int, error) { return 0, nil }

// Read reads output from the pseudo-console. It returns io.EOF once the
// pseudo-console has been closed (after the child exited and its output
// drained, or on Hangup) and everything before was read.
func (p *Process) Read(b []byte) (int, error) {
	if p.orphaned.Load() {
		return p.readRest(b)
	}
	n, err := p.out.Read(b)
	if n > 0 {
		p.lastOut.Store(time.Now().UnixNano())
		return n, nil
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && p.orphaned.Load():
		return p.readRest(b)
	case err == io.EOF:
		p.eofOnce.Do(func() { close(p.eof) })
	}
	return n, err
}

// orphanBound is how long the output pipe may stay open after the
// pseudo-console was closed, and then how long it may stay quiet. Conhost
// may still write its last frame after ClosePseudoConsole returns
// (Windows 11 24H2 no longer waits for it), and its exit then ends the
// pipe. Under Wine the pipe was seen to stay open now and then with
// conhost and every child gone, some handle to its write end left
// behind; nothing of the terminal's can write to it any more, so once it
// has been quiet for orphanBound the output ends there.
const orphanBound = time.Second

// watchOrphan ends the output once the pipe outlived the console by
// orphanBound: the reader reads on until the pipe is quiet (readRest).
func (p *Process) watchOrphan() {
	select {
	case <-p.eof:
		return
	case <-time.After(orphanBound):
	}
	p.orphanMu.Lock()
	p.orphaned.Store(true)
	p.out.SetReadDeadline(time.Now()) // wakes a reader blocked on the empty pipe
	p.orphanMu.Unlock()
}

// readRest reads the orphaned pipe: what it holds, and what still comes
// while it is never quiet for orphanBound; then it reports EOF. An empty
// pipe is not yet the end: conhost may still be writing, and a reader
// that was parked on credit when the console closed let conhost's last
// writes wait behind a full pipe, which they fill again only once this
// read has made room.
func (p *Process) readRest(b []byte) (int, error) {
	p.orphanMu.Lock()
	p.out.SetReadDeadline(time.Now().Add(orphanBound))
	p.orphanMu.Unlock()
	n, err := p.out.Read(b)
	if n > 0 {
		return n, nil
	}
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		err = io.EOF
	}
	if err == io.EOF {
		p.eofOnce.Do(func() { close(p.eof) })
	}
	return 0, err
}

// outputPipe makes the pipe conhost writes the output to: a named pipe
// whose read end is ours and overlapped, so that it is in the runtime's
// poller and a read blocked on it can be woken (watchOrphan needs that;
// an anonymous pipe's read can only end by data or by its end). The name
// is unique, the pipe has one instance, made before the client end is
// opened, and remote clients are refused.
func outputPipe() (*os.File, windows.Handle, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, 0, err
	}
	name, err := windows.UTF16PtrFromString(fmt.Sprintf(`\\.\pipe\ptyplex-conpty-%d-%x`, os.Getpid(), rnd))
	if err != nil {
		return nil, 0, err
	}
	srv, err := windows.CreateNamedPipe(name,
		windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 0, pipeSize, 0, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("CreateNamedPipe: %w", err)
	}
	cli, err := windows.CreateFile(name, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		windows.CloseHandle(srv)
		return nil, 0, fmt.Errorf("open the output pipe's write end: %w", err)
	}
	return os.NewFile(uintptr(srv), "conpty-output"), cli, nil
}

// Write sends input to the pseudo-console: text as UTF-8, keys as VT
// sequences. It blocks while the input pipe is full. On the launcher
// path (Wine) each ^C (0x03) goes to the launcher instead, which types
// it into the console as Windows' conhost would have taken it.
func (p *Process) Write(b []byte) (int, error) {
	if !p.useCtrl {
		return p.in.Write(b)
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0x03)
		if i < 0 {
			m, err := p.in.Write(b)
			return n + m, err
		}
		if i > 0 {
			m, err := p.in.Write(b[:i])
			n += m
			if err != nil {
				return n, err
			}
		}
		if err := p.typeCtrlC(); err != nil {
			return n, err
		}
		n++
		b = b[i+1:]
	}
	return n, nil
}

// typeCtrlC asks the launcher for one ^C.
func (p *Process) typeCtrlC() error {
	p.ctrlMu.Lock()
	defer p.ctrlMu.Unlock()
	if p.ctrlC == 0 {
		return os.ErrClosed
	}
	if err := releaseSemaphore(p.ctrlC); err != nil {
		return fmt.Errorf("ReleaseSemaphore: %w", err)
	}
	return nil
}

// TryWrite never writes on Windows: an anonymous pipe offers no
// non-blocking write for one handle without making every write on it
// non-blocking. It returns 0, and the caller queues the input for its
// blocking writer, which keeps the order of the input.
func (p *Process) TryWrite(b []byte) (int, error) { return 0, nil }

// SetReadDeadline is not offered on Windows: the output's deadline is
// the backend's own, for ending an orphaned pipe (watchOrphan).
func (p *Process) SetReadDeadline(t time.Time) error {
	return fmt.Errorf("read deadline: %w", ErrNotSupported)
}

// SetWriteDeadline is not available for the pipes of a pseudo-console.
func (p *Process) SetWriteDeadline(t time.Time) error { return p.in.SetWriteDeadline(t) }

// ResizePixels is Resize: a console has no size in pixels.
func (p *Process) ResizePixels(cols, rows, _, _ int) error { return p.Resize(cols, rows) }

// Resize changes the pseudo-console's size; conhost tells the child with
// a WINDOW_BUFFER_SIZE_EVENT. Wine's ResizePseudoConsole is a stub that
// fails (E_NOTIMPL); the error says so and the size is left as it was.
// Once the pseudo-console is closed (the child exited and its output
// drained, or Hangup, or Close) there is nothing to resize: the error is
// errConsoleClosed and the size stays.
func (p *Process) Resize(cols, rows int) error {
	c, r := int(clampSize(cols)), int(clampSize(rows))
	size := windows.Coord{X: int16(min(c, 32767)), Y: int16(min(r, 32767))}
	p.sizeMu.Lock()
	defer p.sizeMu.Unlock()
	if p.consoleGone {
		return fmt.Errorf("ResizePseudoConsole %dx%d: %w", c, r, errConsoleClosed)
	}
	if err := resizeConsole(p.hpc, size); err != nil {
		return fmt.Errorf("ResizePseudoConsole %dx%d: %w", c, r, err)
	}
	p.cols, p.rows = c, r
	return nil
}

// errConsoleClosed is Resize's error after the pseudo-console was closed.
var errConsoleClosed = errors.New("the pseudo-console is closed")

// resizeConsole is ResizePseudoConsole; a variable so that a test can see
// what Resize passes where Wine cannot apply it.
var resizeConsole = windows.ResizePseudoConsole

// Size reports the pseudo-console's size as last set.
func (p *Process) Size() (cols, rows int, err error) {
	p.sizeMu.Lock()
	defer p.sizeMu.Unlock()
	return p.cols, p.rows, nil
}

// Signal gives sig its Windows meaning for the child (see signalTree);
// the child's tree is the child here, as Windows has no process groups
// a pseudo-console could tell apart.
func (p *Process) Signal(sig syscall.Signal) error { return p.signalTree(sig) }

// SignalGroup is Signal: the job holds the child's whole tree.
func (p *Process) SignalGroup(sig syscall.Signal) error { return p.signalTree(sig) }

// SignalForeground is Signal: Windows has no foreground process group.
func (p *Process) SignalForeground(sig syscall.Signal) error { return p.signalTree(sig) }

// signalTree maps a Unix signal name to what Windows has:
//   - SIGINT types Ctrl-C (0x03) into the console, which conhost turns
//     into a CTRL_C_EVENT for every process attached to it, as a
//     keyboard's ^C does;
//   - SIGHUP, SIGTERM and SIGKILL end the job, the child's whole tree,
//     with exit code 128+signal (Windows has no polite request that
//     every console program honours);
//   - every other signal fails with ErrNotSupported.
func (p *Process) signalTree(sig syscall.Signal) error {
	switch sig {
	case syscall.SIGINT:
		if p.useCtrl {
			return p.typeCtrlC()
		}
		// Not under the caller's locks: the input pipe may be full.
		go p.in.Write([]byte{0x03})
		return nil
	case syscall.SIGHUP, syscall.SIGTERM, syscall.SIGKILL:
		select {
		case <-p.exited:
			// The child is gone; the rest of the tree is KillSession's.
		default:
			p.killedBy.CompareAndSwap(0, int32(sig))
		}
		if err := windows.TerminateJobObject(p.job, 128+uint32(sig)); err != nil {
			return fmt.Errorf("TerminateJobObject: %w", err)
		}
		return nil
	}
	return fmt.Errorf("signal %d: %w", int(sig), ErrNotSupported)
}

// Foreground is not supported on Windows.
func (p *Process) Foreground() (int, error) { return 0, ErrNotSupported }

// ForegroundProcess is not supported on Windows: a console has no
// foreground process group.
func (p *Process) ForegroundProcess() (pgrp int, name string, err error) {
	return 0, "", ErrNotSupported
}

// WaitExit blocks until the child has exited. It returns early with an
// error if the Process is closed.
func (p *Process) WaitExit() error {
	select {
	case <-p.exited:
		return nil
	case <-p.closed:
		select {
		case <-p.exited:
			return nil
		default:
		}
		return errors.New("process closed")
	}
}

// ExitStatus blocks like WaitExit and returns how the child ended.
func (p *Process) ExitStatus() (Status, error) {
	if err := p.WaitExit(); err != nil {
		return Status{}, err
	}
	return p.Reap()
}

// Reap returns the child's exit status; call it after WaitExit. Later
// calls return the first result.
func (p *Process) Reap() (Status, error) {
	p.reapOnce.Do(func() {
		<-p.exited // Reap is called after WaitExit; this orders watch's writes
		code := p.code
		if p.codeErr != nil {
			p.reapErr = p.codeErr
			return
		}
		p.status = Status{Code: int(code)}
		if sig := syscall.Signal(p.killedBy.Load()); sig != 0 && code == 128+uint32(sig) {
			p.status.Signal = sig
		}
	})
	return p.status, p.reapErr
}

// KillSession ends every process left in the child's job, the child's
// descendants, whatever sig is (Windows can only end them), and returns
// how many there were. holders means nothing here: every process on the
// pseudo-console that could hold its output open is in the job.
func (p *Process) KillSession(sig syscall.Signal, holders bool) int {
	n := p.jobCount()
	if n > 0 {
		windows.TerminateJobObject(p.job, 128+uint32(syscall.SIGKILL))
	}
	return n
}

// jobCount is how many processes the job still has.
func (p *Process) jobCount() int {
	var info jobAccounting
	if err := windows.QueryInformationJobObject(p.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return 0
	}
	return int(info.ActiveProcesses)
}

// Hangup closes the pseudo-console, which ends the output pipe and sends
// CTRL_CLOSE_EVENT to the processes still attached.
func (p *Process) Hangup() error {
	p.closeConsole()
	return nil
}

// Close kills what is left of the child's tree (closing the job does),
// closes the pseudo-console and our pipe ends. Reap still works.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		windows.CloseHandle(p.job)
		p.ctrlMu.Lock()
		if p.ctrlC != 0 {
			windows.CloseHandle(p.ctrlC)
			p.ctrlC = 0
		}
		p.ctrlMu.Unlock()
		p.closeConsole()
		p.in.Close()
		// The output pipe ends when the console is gone; closing our end
		// first would race a reader that has yet to see its EOF.
		go func() {
			<-p.consoleDone
			p.out.Close()
		}()
	})
	return nil
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// x/sys/windows does not define.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                       int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime   int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses uint32
	TotalTerminatedProcesses                             uint32
}
