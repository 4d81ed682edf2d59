// Package sshtest runs a real OpenSSH server on 127.0.0.1 for tests that
// reach a sidecar or install binaries over ssh, and for ptyplex-bench's
// remote rows: its host key, the user key and known_hosts are generated
// into a temporary directory, it listens on a free port, and nothing of the
// system's ssh configuration is read or changed (the client runs with -F
// /dev/null, the server with its own config file).
package sshtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Sshd is the binary; Debian's openssh-server puts it here.
const Sshd = "/usr/sbin/sshd"

// sshdPath is Sshd, but for the test of what happens without it.
var sshdPath = Sshd

// RequireEnv names the environment variable that makes a missing sshd fail
// a test instead of skipping it (the Makefile's test targets set it: CI
// installs openssh-server, so a skip there would hide the ssh tests).
const RequireEnv = "PTYPLEX_REQUIRE_SSHD"

// ErrNoSshd is returned by New when Sshd is not installed.
var ErrNoSshd = errors.New("no " + Sshd + ": install openssh-server (apt-get install openssh-server) to run the ssh tests")

// Server is a running sshd.
type Server struct {
	Dir  string // its temporary directory: keys, config, known_hosts
	Port int
	User string
	// SSH is the client command reaching it, without the remote command:
	// ssh -F /dev/null -p PORT -i KEY -o ... user@127.0.0.1.
	SSH []string

	cmd    *exec.Cmd
	exited chan struct{} // closed once sshd has exited and its log is copied
}

// Start starts an sshd that accepts the generated user key for the current
// user and stops it when t ends. Without openssh-server it skips t, naming
// the package (.ci/run installs it), or fails it when PTYPLEX_REQUIRE_SSHD
// is set.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%v (%s is set: the ssh tests must run)", ErrNoSshd, RequireEnv)
		}
		t.Skip(ErrNoSshd.Error())
	}
	s, err := New(t.TempDir(), t.Logf)
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// bindAttempts bounds the starts on a fresh port: the free port is found by
// closing a listener, and another process may take it before sshd binds.
const bindAttempts = 5

// New starts an sshd like Start, outside a test: dir (which it makes
// private) holds its keys and config, logf gets sshd's log lines, and the
// caller stops it with Stop. Without openssh-server it returns ErrNoSshd.
func New(dir string, logf func(format string, args ...any)) (*Server, error) {
	if _, err := os.Stat(sshdPath); err != nil {
		return nil, ErrNoSshd
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("current user: %w", err)
	}
	if os.Geteuid() == 0 {
		// sshd running as root insists on its privilege separation
		// directory, which the package's service creates at boot.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, err
		}
	}
	// sshd refuses keys and configs other users could write.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	keygen := func(path string) error {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ptyplex-test", "-f", path).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ssh-keygen %s: %v\n%s", path, err, out)
		}
		return nil
	}
	hostKey := filepath.Join(dir, "host_key")
	userKey := filepath.Join(dir, "user_key")
	if err := keygen(hostKey); err != nil {
		return nil, err
	}
	if err := keygen(userKey); err != nil {
		return nil, err
	}
	pub, err := os.ReadFile(userKey + ".pub")
	if err != nil {
		return nil, err
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		return nil, err
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		port, err := pickPort()
		if err != nil {
			return nil, err
		}
		known := filepath.Join(dir, "known_hosts")
		if err := os.WriteFile(known, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", port, hostPub)), 0o600); err != nil {
			return nil, err
		}
		config := filepath.Join(dir, "sshd_config")
		conf := strings.Join([]string{
			fmt.Sprintf("Port %d", port),
			"ListenAddress 127.0.0.1",
			"HostKey " + hostKey,
			"AuthorizedKeysFile " + authorized,
			"PidFile " + filepath.Join(dir, "sshd.pid"),
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"UsePAM no",
			"StrictModes no",
			"PrintMotd no",
			"LogLevel ERROR",
			// The children of a test's sessions see the test's PATH, so
			// that binaries it built are found by name on the other side.
			// SHLVL=1 keeps the user's ~/.bashrc out: bash reads it for
			// a command from sshd only as a top-level shell, and what a
			// machine's rc file does (one here ran `pyenv rehash`, which
			// waits up to a minute for a lock other sessions hold) is no
			// part of what the tests check.
			"SetEnv PATH=" + os.Getenv("PATH") + " SHLVL=1",
			"",
		}, "\n")
		if err := os.WriteFile(config, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		s := &Server{Dir: dir, Port: port, User: u.Username, SSH: []string{
			"ssh", "-F", "/dev/null", "-p", fmt.Sprint(port), "-i", userKey,
			"-o", "UserKnownHostsFile=" + known, "-o", "StrictHostKeyChecking=yes",
			"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=10",
			"-o", "LogLevel=ERROR",
			u.Username + "@127.0.0.1",
		}}
		if err := s.start(config, logf); err != nil {
			return nil, err
		}
		err = s.waitReady()
		if err == nil {
			return s, nil
		}
		s.Stop()
		if !errors.Is(err, errExited) || attempt == bindAttempts {
			return nil, err
		}
		// sshd exited at once: most likely another process took the
		// port between freePort and sshd's bind. A new port, again.
		logf("sshtest: %v; starting again on another port", err)
	}
}

func (s *Server) start(config string, logf func(string, ...any)) error {
	s.cmd = exec.Command(sshdPath, "-D", "-e", "-f", config)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting sshd: %w", err)
	}
	s.exited = make(chan struct{})
	go func() {
		defer close(s.exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logf("sshd: %s", sc.Text())
		}
		s.cmd.Wait()
	}()
	return nil
}

// Stop kills sshd and waits for it. The sessions it started (their own
// processes) end as their connections do.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// Pid is sshd's process id: what it has reaped of its sessions (and they
// of their children) adds up in its children's CPU time.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Command returns the ssh argv that runs remote (one shell command line)
// on the server; with tty it asks for a terminal (-tt), else none (-T).
func (s *Server) Command(tty bool, remote ...string) []string {
	argv := append([]string(nil), s.SSH[:len(s.SSH)-1]...)
	if tty {
		argv = append(argv, "-tt")
	} else {
		argv = append(argv, "-T")
	}
	return append(append(argv, s.SSH[len(s.SSH)-1]), remote...)
}

var errExited = errors.New("sshd exited while starting")

// waitReady runs `true` over ssh until it works: sshd listens a moment
// after it started, and only a real login shows the keys are accepted.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	// An attempt ends when sshd does: whatever holds the port instead
	// may accept the connection and never answer.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		argv := s.Command(false, "true")
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%w (port %d): %s", errExited, s.Port, s.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ssh to the test sshd on port %d fails: %v\n%s", s.Port, err, out)
		}
		// A short pause between attempts (sshd is still starting),
		// bounded by the deadline above.
		time.Sleep(20 * time.Millisecond)
	}
}

// pickPort is freePort, but for the test of a port taken meanwhile.
var pickPort = freePort

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
