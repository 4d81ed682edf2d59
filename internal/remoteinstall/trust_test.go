//go:build unix

package remoteinstall

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// stranger creates a throwaway local user (the attacker) and removes it
// when the test ends. It needs root, as the other cross-user tests do.
func stranger(t *testing.T) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that acts as a second user")
		}
		t.Fatal("this test acts as a second local user and must run as root (CI does); set PTYPLEX_NO_ROOT_TESTS=1 to skip it explicitly")
	}
	var b [4]byte
	rand.Read(b[:])
	name := "ptyi" + hex.EncodeToString(b[:])
	if out, err := testproc.Admin("useradd", "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v\n%s", err, out)
	}
	t.Cleanup(func() { testproc.Admin("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// asStranger runs a shell script as that user.
func asStranger(t *testing.T, uid, gid int, script string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid %d: %s: %v\n%s", uid, script, err, out)
	}
}

// Another user prepared a directory the victim installs into: the right
// binaries, already there, so that the install takes them as its own; the
// attacker can swap them for a script afterwards. The install refuses to
// use a directory another user owns or can write to, before it runs
// anything from it, and says why.
func TestInstallRefusesDirectoryOthersControl(t *testing.T) {
	uid, gid := stranger(t)
	bins := fakeBinaries(t, "v1.0.0", "real")
	tmp := t.TempDir() // a /tmp of the test's own: root's, sticky, open to all
	for _, d := range []string{filepath.Dir(tmp), bins} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(tmp, 0o1777)
	shared := filepath.Join(tmp, "shared")
	// The attacker's directory, open to all, with the very files the
	// victim's install would copy, and the manifest it would write.
	asStranger(t, uid, gid, "mkdir -m 0777 "+shared+" && mkdir -m 0777 "+shared+"/v1.0.0 && cp "+bins+"/* "+shared+"/v1.0.0/ && chmod 0777 "+shared+"/v1.0.0/*")
	_, err := Install(Options{Transport: local, Dir: shared, LocalDir: bins, Version: "v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "refusing to use") || !strings.Contains(err.Error(), "belongs to uid "+strconv.Itoa(uid)) {
		t.Fatalf("an install into another user's directory: %v", err)
	}

	// A directory of ours others may write to is no better: they could
	// rename our files away and put theirs in their place.
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	_, err = Install(Options{Transport: local, Dir: filepath.Join(open, "inst"), LocalDir: bins, Version: "v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "other users may write to it (mode drwxrwxrwx") {
		t.Fatalf("an install below a directory open to all: %v", err)
	}
	// Nor a symbolic link another user planted in a sticky directory.
	sticky := filepath.Join(t.TempDir(), "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o1777)
	mine := t.TempDir()
	asStranger(t, uid, gid, "ln -s "+mine+" "+sticky+"/link")
	_, err = Install(Options{Transport: local, Dir: filepath.Join(sticky, "link"), LocalDir: bins, Version: "v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "belongs to uid "+strconv.Itoa(uid)) {
		t.Fatalf("an install through another user's symbolic link: %v", err)
	}
}

// A reused file must be ours alone, and new directories are created for
// the user alone whatever the remote umask says.
func TestInstallModes(t *testing.T) {
	bins := fakeBinaries(t, "v1.0.0", "real")
	root := filepath.Join(t.TempDir(), "a", "b")
	umask002 := []string{"sh", "-c", `umask 002; eval "$1"`, "sh"}
	if _, err := Install(Options{Transport: umask002, Dir: root, LocalDir: bins, Version: "v1.0.0"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(root), root, filepath.Join(root, "v1.0.0")} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v (%v), want 0700", d, fi.Mode(), err)
		}
	}
	sidecar := filepath.Join(root, "v1.0.0", "ptyplex-sidecar")
	os.Chmod(sidecar, 0o777)
	_, err := Install(Options{Transport: local, Dir: root, LocalDir: bins, Version: "v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "refusing to use ptyplex-sidecar: other users may write to it") {
		t.Fatalf("a group- and world-writable sidecar reused: %v", err)
	}
	if errors.Is(err, ErrNotOurs) {
		t.Fatalf("the refusal is not about the file's content: %v", err)
	}
}

// What the other side says on stderr reaches the error escaped: printed to
// a terminal, it sets no clipboard and no title.
func TestInstallEscapesRemoteMessages(t *testing.T) {
	hostile := []string{"sh", "-c", `printf 'denied\033]52;c;aGk=\007\033]0;t\007\n' >&2; exit 255`, "sh"}
	_, err := Install(Options{Transport: hostile, LocalDir: fakeBinaries(t, "v1.0.0", "x"), Version: "v1.0.0"})
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), `denied\e]52;c;aGk=\a\e]0;t\a`) {
		t.Fatalf("the remote's message: %q", err)
	}
}

// ssh's messages end in CR LF; the CR does not show in the error (it
// used to, as a literal \r).
func TestInstallDropsTransportCR(t *testing.T) {
	ssh := []string{"sh", "-c", `printf 'ssh: connect to host 127.0.0.1 port 1: Connection refused\r\nsecond\r\n' >&2; exit 255`, "sh"}
	_, err := Install(Options{Transport: ssh, LocalDir: fakeBinaries(t, "v1.0.0", "x"), Version: "v1.0.0"})
	if err == nil || strings.Contains(err.Error(), `\r`) || !strings.HasSuffix(err.Error(), "Connection refused\nsecond") {
		t.Fatalf("the transport's message: %q", err)
	}
}
