// Package sshtest runs a real OpenSSH server on 127.0.0.1 for tests that
// reach a sidecar or install binaries over ssh: its host key, the user key
// and known_hosts are generated into a temporary directory, it listens on a
// free port, and nothing of the system's ssh configuration is read or
// changed (the client runs with -F /dev/null, the server with its own
// config file).
package sshtest

import (
	"bufio"
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

// Server is a running sshd.
type Server struct {
	Dir  string // its temporary directory: keys, config, known_hosts
	Port int
	User string
	// SSH is the client command reaching it, without the remote command:
	// ssh -F /dev/null -p PORT -i KEY -o ... user@127.0.0.1.
	SSH []string
}

// Start starts an sshd that accepts the generated user key for the current
// user and stops it when t ends. Without openssh-server it skips t, naming
// the package (.ci/run installs it).
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Sshd); err != nil {
		t.Skipf("no %s: install openssh-server (apt-get install openssh-server) to run the ssh tests", Sshd)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("sshtest: current user: %v", err)
	}
	if os.Geteuid() == 0 {
		// sshd running as root insists on its privilege separation
		// directory, which the package's service creates at boot.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("sshtest: %v", err)
		}
	}
	dir := t.TempDir()
	// sshd refuses keys and configs other users could write.
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	keygen := func(path string) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ptyplex-test", "-f", path).CombinedOutput()
		if err != nil {
			t.Fatalf("sshtest: ssh-keygen %s: %v\n%s", path, err, out)
		}
	}
	hostKey := filepath.Join(dir, "host_key")
	userKey := filepath.Join(dir, "user_key")
	keygen(hostKey)
	keygen(userKey)
	pub, err := os.ReadFile(userKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", port, hostPub)), 0o600); err != nil {
		t.Fatal(err)
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
		"SetEnv PATH=" + os.Getenv("PATH"),
		"",
	}, "\n")
	if err := os.WriteFile(config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Sshd, "-D", "-e", "-f", config)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("sshtest: starting sshd: %v", err)
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Logf("sshd: %s", sc.Text())
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-logged
		cmd.Wait()
	})
	s := &Server{Dir: dir, Port: port, User: u.Username, SSH: []string{
		"ssh", "-F", "/dev/null", "-p", fmt.Sprint(port), "-i", userKey,
		"-o", "UserKnownHostsFile=" + known, "-o", "StrictHostKeyChecking=yes",
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=10",
		"-o", "LogLevel=ERROR",
		u.Username + "@127.0.0.1",
	}}
	s.waitReady(t)
	return s
}

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

// waitReady runs `true` over ssh until it works: sshd listens a moment
// after it started, and only a real login shows the keys are accepted.
func (s *Server) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		argv := s.Command(false, "true")
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshtest: ssh to the test sshd on port %d fails: %v\n%s", s.Port, err, out)
		}
		// A short pause between attempts (sshd is still starting),
		// bounded by the deadline above.
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
