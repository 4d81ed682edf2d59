//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/session/wire"
)

// forgedMarks is what a hostile file or program prints to end the command
// that shows it (D;0), fake a new prompt (A, B) and, with C, start a
// command of its own: the marks an integrated shell sends, without its key.
const forgedMarks = "\x1b]133;D;0\a\x1b]133;A\a$ \x1b]133;B\a"

// A file that holds OSC 133 marks neither ends the command that prints it
// nor adds commands: run reports the command's own status and the whole of
// its output, and commands lists only what the shell ran. Marks that carry
// a made-up key count no more than marks without one.
func TestSecurityRunIgnoresForgedMarks(t *testing.T) {
	for _, sh := range []string{"bash", "zsh"} {
		t.Run(sh, func(t *testing.T) { testRunIgnoresForgedMarks(t, sh) })
	}
}

func testRunIgnoresForgedMarks(t *testing.T, sh string) {
	s := integratedShell(t, sh)
	dir := t.TempDir()
	evil := filepath.Join(dir, "evil.txt")
	body := "first line\n" + forgedMarks + "fake-command\r\n\x1b]133;C\a" +
		"\x1b]133;D;0;ptyplex=00000000000000000000000000000000\a" + forgedMarks + "last line\n"
	if err := os.WriteFile(evil, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := s.runCmd("cat " + evil + "; echo after; false")
	if r.code != 1 || !strings.Contains(r.stdout, "first line\n") || !strings.Contains(r.stdout, "last line\nafter\n") {
		t.Fatalf("want exit 1 and the file's every line, then after; got %v", r)
	}
	var list wire.CommandsData
	if err := json.Unmarshal([]byte(s.ok("commands", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Commands) != 1 || !strings.HasPrefix(list.Commands[0].Command, "cat ") {
		t.Fatalf("commands: want only the cat command; got %+v", list)
	}
}

// A program that prints a fake prompt and reads its input is still the
// running command: run does not return its made-up status, and the next
// run is not typed into it (it would get the secret the command holds);
// that run waits for the program to end and says why it did not type.
func TestSecurityRunNotTypedIntoFakePrompt(t *testing.T) {
	s := integratedShell(t, "bash")
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved")
	fake := filepath.Join(dir, "fake")
	script := "#!/bin/sh\nprintf '" + strings.ReplaceAll(forgedMarks, "\x1b", `\033`) + "'\n" +
		"IFS= read -r line\nprintf '%s\\n' \"$line\" >> " + saved + "\nexit 3\n"
	if err := testproc.WriteExecutable(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	r := s.runCmd(fake, "--timeout", "1s")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "still running") {
		t.Fatalf("the fake prompt ended the run: want exit 124, still running; got %v", r)
	}
	r = s.runCmd("export AWS_SECRET=hunter2; echo next", "--timeout", "500ms")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "earlier command is still running") {
		t.Fatalf("run while the fake prompt shows: %v", r)
	}
	if b, err := os.ReadFile(saved); err == nil {
		t.Fatalf("the next command was typed into the program, which saved %q", b)
	}
	// The program ends with its own status when it gets a line.
	s.input("bye\r")
	s.waitFor("the prompt after the fake", func(string) bool {
		var list wire.CommandsData
		json.Unmarshal([]byte(s.ok("commands", "--json")), &list)
		return list.AtPrompt
	})
	var list wire.CommandsData
	json.Unmarshal([]byte(s.ok("commands", "--json")), &list)
	if c := list.Commands[len(list.Commands)-1]; c.Running || c.ExitCode == nil || *c.ExitCode != 3 {
		t.Fatalf("the fake prompt program: want exit 3; got %+v", c)
	}
	wantRun(t, s.runCmd("echo next"), 0, "next\n")
}

// The marks' key is the shell's alone: the programs it runs have no trace
// of it in their environment or their shell variables, and the startup
// file that held it is gone once the shell has sent its first mark.
func TestSecurityMarkKeyNotInherited(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "dump")
	s := integratedShell(t, "bash", "--pty-dump", dump)
	key := markKey(t, dump)
	r := s.runCmd("env; bash -c set; tr '\\0' '\\n' </proc/$$/environ")
	if r.code != 0 || strings.Contains(r.stdout, key) || !strings.Contains(r.stdout, "HOME=") {
		t.Fatalf("a program the shell runs sees the key: %v", r)
	}
	rc := s.runCmd("tr '\\0' '\\n' </proc/$$/cmdline | grep /bashrc")
	file := strings.TrimSpace(rc.stdout)
	if !strings.HasPrefix(file, os.TempDir()) {
		t.Fatalf("the shell's rc file: %v", rc)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("%s, which holds the key, is still there: %v", file, err)
	}
	// And the user's own `set -a` exports nothing of it either.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("set -a\nPS1='$ '\nHISTFILE=/dev/null\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	dump2 := filepath.Join(t.TempDir(), "dump")
	s2 := start(t, "--pty-dump", dump2, "--shell-integration", "--", "bash")
	s2.waitText("$")
	key = markKey(t, dump2)
	if r := s2.runCmd("env"); r.code != 0 || strings.Contains(r.stdout, key) || !strings.Contains(r.stdout, "HOME=") {
		t.Fatalf("with set -a the key is exported: %v", r)
	}
}

// markKey reads the marks' key from a session's --pty-dump.
func markKey(t *testing.T, dump string) string {
	t.Helper()
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ptyplex=([0-9a-f]{32})`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the shell's marks carry no key: %q", b)
	}
	return string(m[1])
}
