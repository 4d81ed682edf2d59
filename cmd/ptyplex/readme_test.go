//go:build unix

package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmes lists the documents whose shell examples must work as written:
// the README, the pages under docs/ that it leads to, and the MCP server's.
func readmes(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages under docs/: the README's examples moved there")
	}
	return append([]string{"../../README.md", "../../mcpserver/README.md"}, pages...)
}

// exampleTimeout bounds one README example; each is a few commands.
const exampleTimeout = 60 * time.Second

// codeBlock is one fenced block of a Markdown file.
type codeBlock struct {
	file string
	line int    // of the opening fence
	info string // the fence's info string: "sh", "sh norun", "json", ...
	text string
}

// codeBlocks returns the fenced (```) blocks of a Markdown file.
func codeBlocks(t *testing.T, file string) []codeBlock {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []codeBlock
	var cur *codeBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &codeBlock{file: file, line: n, info: strings.TrimSpace(strings.TrimPrefix(line, "```"))}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: code block never closed", file, cur.line)
	}
	return blocks
}

// TestREADMEExamples runs every shell example of the READMEs, as written,
// in a fresh directory with the ptyplex under test first on PATH, under
// bash -eu -o pipefail so that any failing command fails the example.
// Blocks fenced as ```sh are run; a shell block that cannot run here
// (it needs make and the repository, an MCP client, or a socket path
// that stands for yours) is fenced ```sh norun and skipped on purpose.
// Any other shell fence (bash, shell, console) is an error, so a new
// example is either run or explicitly marked.
func TestREADMEExamples(t *testing.T) {
	t.Parallel()
	ran := 0
	for _, file := range readmes(t) {
		for _, b := range codeBlocks(t, file) {
			lang, _, _ := strings.Cut(b.info, " ")
			norun := strings.Contains(" "+b.info+" ", " norun ")
			switch {
			case lang == "sh" && norun:
				continue
			case lang == "sh":
			case lang == "bash" || lang == "shell" || lang == "console" || lang == "zsh":
				t.Errorf("%s:%d: shell block fenced ```%s: fence it ```sh (run by this test) or ```sh norun", b.file, b.line, b.info)
				continue
			default:
				continue
			}
			ran++
			b := b
			t.Run(strings.TrimPrefix(b.file, "../../")+":"+strconv.Itoa(b.line), func(t *testing.T) {
				t.Parallel()
				runExample(t, b)
			})
		}
	}
	if ran == 0 {
		t.Fatal("no runnable ```sh example found in the READMEs")
	}
}

func runExample(t *testing.T, b codeBlock) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eu", "-o", "pipefail", "-c", b.text)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	// Whatever the example left running in its directory (a session it
	// did not stop) is a failure of the example; end it either way.
	// A daemon that answered STOP may still be on its way out: give each
	// the usual deadline to exit.
	for _, pid := range processesIn(dir) {
		if !waitGone(pid, deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s:%d: the example left process %d running", b.file, b.line, pid)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("%s:%d: the example did not finish within %v:\n%s\noutput:\n%s", b.file, b.line, exampleTimeout, b.text, out)
	}
	if err != nil {
		t.Fatalf("%s:%d: the example failed (%v):\n%s\noutput:\n%s", b.file, b.line, err, b.text, out)
	}
}

// processesIn lists the processes whose working directory is dir: the
// daemons and programs an example started there.
func processesIn(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}
