// Command record runs real programs in a PTY and stores the raw bytes
// they write, for the screen package's golden tests.
//
//	go run ./screen/internal/cmd/record [-out testdata/screen] [name...]
//
// Each script drives a program with input and waits on its screen (read
// back through the screen package itself, which also answers the
// program's terminal queries). The resulting NAME.bin files are replayed
// by the tests; `go test ./screen -update` writes the matching goldens.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"
	"github.com/ptyplex/ptyplex/screen"
)

const (
	cols, rows  = 80, 24
	waitTimeout = 15 * time.Second
	quiet       = 300 * time.Millisecond // output silence that ends a wait
	prompt      = "rec$ "
)

// session is a program in a PTY with its output mirrored into a Screen.
type session struct {
	cmd  *exec.Cmd
	pty  *os.File
	mu   sync.Mutex
	raw  bytes.Buffer
	scr  *screen.Screen
	last time.Time
	done chan struct{}
	cut  int // if > 0, the recording ends here (see mark)
}

// mark ends the recording at the current point: the program is still
// driven to a clean exit, but the stream kept shows it on screen.
func (s *session) mark() {
	s.mu.Lock()
	s.cut = s.raw.Len()
	s.mu.Unlock()
}

func start(dir string, env []string, name string, args ...string) (*session, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, pty: f, scr: screen.New(cols, rows, screen.Options{}), last: time.Now(), done: make(chan struct{})}
	go s.read()
	return s, nil
}

// read copies output until EOF, answering queries like a terminal would.
func (s *session) read() {
	defer close(s.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := s.pty.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.raw.Write(buf[:n])
			s.scr.Write(buf[:n])
			reply := s.scr.TakeReplies()
			s.last = time.Now()
			s.mu.Unlock()
			if reply != nil {
				s.pty.Write(reply)
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *session) send(in string) {
	s.pty.Write([]byte(in))
}

// waitFor waits until the visible screen contains text, then for quiet.
func (s *session) waitFor(text string) error {
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		ok := strings.Contains(s.scr.Text(), text)
		s.mu.Unlock()
		if ok {
			return s.settle()
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Errorf("timeout waiting for %q; screen:\n%s", text, s.scr.Text())
}

// settle waits until the program has been silent for a while.
func (s *session) settle() error {
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		idle := time.Since(s.last)
		s.mu.Unlock()
		if idle >= quiet {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("program never went quiet")
}

// finish waits for the program to exit and returns everything it wrote.
func (s *session) finish() ([]byte, error) {
	select {
	case <-s.done:
	case <-time.After(waitTimeout):
		s.cmd.Process.Kill()
		<-s.done
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, fmt.Errorf("program did not exit; screen:\n%s", s.scr.Text())
	}
	s.cmd.Wait()
	s.pty.Close()
	if s.cut > 0 {
		return s.raw.Bytes()[:s.cut], nil
	}
	return s.raw.Bytes(), nil
}

// shell runs bash with a fixed prompt, types each command and waits for
// the prompt to come back, then exits.
func shell(dir string, env []string, cmds ...string) ([]byte, error) {
	s, err := start(dir, env, "bash", "--norc", "--noprofile", "-i")
	if err != nil {
		return nil, err
	}
	if err := s.waitFor(strings.TrimSpace(prompt)); err != nil {
		return nil, err
	}
	for _, c := range cmds {
		s.mu.Lock()
		n := strings.Count(s.raw.String(), prompt)
		s.mu.Unlock()
		s.send(c + "\r")
		if err := s.waitRaw(prompt, n+1); err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
	}
	s.send("exit\r")
	return s.finish()
}

// sendSettle sends in, waits for the program to answer with some output,
// then for quiet: for input whose effect shows no new text to wait for
// (a cursor move, a highlight that moves).
func (s *session) sendSettle(in string) error {
	s.mu.Lock()
	n := s.raw.Len()
	s.mu.Unlock()
	s.send(in)
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		grew := s.raw.Len() > n
		s.mu.Unlock()
		if grew {
			return s.settle()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no output after %q", in)
}

// waitRaw waits until the raw output holds at least n copies of text.
func (s *session) waitRaw(text string, n int) error {
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		ok := strings.Count(s.raw.String(), text) >= n
		s.mu.Unlock()
		if ok {
			return s.settle()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("timeout waiting for %q", text)
}

type script func(dir string, env []string) ([]byte, error)

var scripts = map[string]script{
	"vim-edit": func(dir string, env []string) ([]byte, error) {
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first line\nsecond line\nthird line\n"), 0o644)
		s, err := start(dir, env, "vim", "-u", "NONE", "-N", "-i", "NONE", "notes.txt")
		if err != nil {
			return nil, err
		}
		steps := []struct{ in, want string }{
			{"", "third line"},
			{"jA edited\x1b", "second line edited"},
			{"Go\u00e9t\u00e9 \u4e2d\u6587 done\x1b", "done"},
			{":%s/line/LINE/\r", "LINE"},
			{":w\r", "written"},
		}
		for _, st := range steps {
			if st.in != "" {
				s.send(st.in)
			}
			if err := s.waitFor(st.want); err != nil {
				return nil, err
			}
		}
		s.mark()
		s.send(":q\r")
		return s.finish()
	},
	"less": func(dir string, env []string) ([]byte, error) {
		var b strings.Builder
		for i := 1; i <= 100; i++ {
			fmt.Fprintf(&b, "line %03d of the file shown by less\n", i)
		}
		os.WriteFile(filepath.Join(dir, "long.txt"), []byte(b.String()), 0o644)
		s, err := start(dir, env, "less", "long.txt")
		if err != nil {
			return nil, err
		}
		for _, st := range []struct{ in, want string }{
			{"", "line 023"},
			{" ", "line 046"},
			{"/line 070\r", "line 070"},
			{"k", "line 069"},
		} {
			if st.in != "" {
				s.send(st.in)
			}
			if err := s.waitFor(st.want); err != nil {
				return nil, err
			}
		}
		s.mark()
		s.send("q")
		return s.finish()
	},
	"top-batch": func(dir string, env []string) ([]byte, error) {
		s, err := start(dir, env, "top", "-b", "-n", "1", "-w", "80")
		if err != nil {
			return nil, err
		}
		return s.finish()
	},
	"top-interactive": func(dir string, env []string) ([]byte, error) {
		s, err := start(dir, env, "top", "-d", "1")
		if err != nil {
			return nil, err
		}
		if err := s.waitFor("PID"); err != nil {
			return nil, err
		}
		// Keep a second frame too: top redraws in place over the first.
		if err := s.waitRaw("top - ", 2); err != nil {
			return nil, err
		}
		s.mark()
		s.send("q")
		return s.finish()
	},
	"vim-syntax": func(dir string, env []string) ([]byte, error) {
		src := "# A small program, for syntax colours.\nimport sys\n\n\ndef greet(name: str, times: int = 2) -> None:\n" +
			"    \"\"\"Print a greeting.\"\"\"\n    for i in range(times):\n        print(f\"hello {name} #{i}\")  # comment\n\n\n" +
			"if __name__ == \"__main__\":\n    greet(sys.argv[1] if len(sys.argv) > 1 else \"world\", 3)\n    raise SystemExit(0)\n"
		os.WriteFile(filepath.Join(dir, "greet.py"), []byte(src), 0o644)
		s, err := start(dir, env, "vim", "-u", "NONE", "-N", "-i", "NONE",
			"-c", "syntax on", "-c", "set number", "-c", "set laststatus=2", "greet.py")
		if err != nil {
			return nil, err
		}
		if err := s.waitFor("SystemExit"); err != nil {
			return nil, err
		}
		if err := s.sendSettle("8G"); err != nil {
			return nil, err
		}
		s.mark()
		s.send(":q!\r")
		return s.finish()
	},
	"dialog-menu": func(dir string, env []string) ([]byte, error) {
		s, err := start(dir, env, "dialog", "--title", "Fruit", "--menu", "Pick one:", "12", "40", "4",
			"1", "Apple", "2", "Banana", "3", "Cherry", "4", "Damson")
		if err != nil {
			return nil, err
		}
		if err := s.waitFor("Damson"); err != nil {
			return nil, err
		}
		// Move the highlighted bar off the first entry: a digit selects
		// that entry, whatever cursor-key mode dialog has set.
		if err := s.sendSettle("2"); err != nil {
			return nil, err
		}
		s.mark()
		s.send("\x1b\x1b")
		return s.finish()
	},
	"htop": func(dir string, env []string) ([]byte, error) {
		// Only the recorder's own process is listed, so that the stream
		// shows no other program of the machine it was recorded on.
		s, err := start(dir, env, "htop", "-d", "10", "-p", strconv.Itoa(os.Getpid()))
		if err != nil {
			return nil, err
		}
		if err := s.waitFor("F10Quit"); err != nil {
			return nil, err
		}
		s.mark()
		s.send("q")
		return s.finish()
	},
	"bash-ls-git": func(dir string, env []string) ([]byte, error) {
		if err := makeRepo(dir, env); err != nil {
			return nil, err
		}
		return shell(filepath.Join(dir, "repo"), env,
			"ls --color=always -F",
			"ls --color=always -l --time-style=+",
			"git log --color --graph --decorate",
			"git diff --color HEAD~1 --stat",
		)
	},
	"progress": func(dir string, env []string) ([]byte, error) {
		return shell(dir, env,
			`for i in $(seq 0 5 100); do n=$((i/5)); printf '\r[%-20s] %3d%%' "$(printf '%*s' $n '' | tr ' ' '#')" $i; done; printf '\n'`,
			`printf 'downloading... \e[32mok\e[0m\n'`,
		)
	},
	"wide": func(dir string, env []string) ([]byte, error) {
		return shell(dir, env,
			`printf '\u4e2d\u6587\u5b57\u7b26 wide | \U0001F600\U0001F680 emoji | e\u0301 combining | \uff21\uff22 fullwidth\n'`,
			`printf '%s' 'ab'; for i in $(seq 1 40); do printf '\u5168'; done; printf '\n'`,
			`printf 'caf\u00e9 na\u0308ive \u0915\u094d\u0937 \u2500\u2502\u250c box\n'`,
		)
	},
	"altscreen": func(dir string, env []string) ([]byte, error) {
		return shell(dir, env,
			`echo before alt`,
			`printf '\e[?1049h\e[H\e[2Jinside the alternate screen\e[5;10Hmiddle'; sleep 0.2; printf '\e[?1049l'; echo after alt`,
			`printf '\e[?47h\e[2Jold style alt\e[?47l'; echo back`,
			`printf '\e(0lqqqk\r\nx   x\r\nmqqqj\e(B\n'`,
		)
	},
	"scroll-region": func(dir string, env []string) ([]byte, error) {
		return shell(dir, env,
			`clear`,
			`printf '\e[1;1HHEADER\e[24;1HFOOTER\e[2;23r\e[2;1H'; for i in $(seq 1 40); do printf 'region line %d\n' $i; done; printf '\e[r\e[22;1H'`,
			`printf '\e[5;10r\e[5;1H\eM\eMreverse\e[r\e[20;1H'`,
		)
	},
}

// makeRepo builds a tiny git repository with fixed authors and dates so
// the log is the same on every recording.
func makeRepo(dir string, env []string) error {
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(repo, "src"), 0o755)
	env = append(env,
		"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com",
		"GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z")
	run := func(args ...string) error {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env = repo, env
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %v: %s", args, err, out)
		}
		return nil
	}
	if err := run("git", "init", "-q", "-b", "main"); err != nil {
		return err
	}
	files := map[string]string{"README.md": "# demo\n", "src/main.go": "package main\n", "run.sh": "#!/bin/sh\necho hi\n"}
	for name, body := range files {
		os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644)
	}
	os.Chmod(filepath.Join(repo, "run.sh"), 0o755)
	if err := run("git", "add", "."); err != nil {
		return err
	}
	if err := run("git", "commit", "-q", "-m", "Initial commit"); err != nil {
		return err
	}
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n\nMore words.\n"), 0o644)
	if err := run("git", "commit", "-q", "-am", "Expand the README"); err != nil {
		return err
	}
	return run("git", "tag", "v1.0")
}

// reflowScripts are recorded only when named, into screen/testdata unless
// -out says otherwise (go run ./screen/internal/cmd/record bash-wrap): the
// reflow test resizes them, so they are not goldens.
var reflowScripts = map[string]script{
	"bash-wrap": func(dir string, env []string) ([]byte, error) {
		data, err := shell(dir, env,
			"printf '%s ' $(seq 1 70); echo",
			"seq -s, 1 120",
			"echo "+strings.Repeat("long-typed-command-line ", 5),
			"printf '中文字符%.0s' $(seq 1 25); echo",
			"for i in 1 2 3; do printf 'row %d: %s\\n' $i \"$(printf 'x%.0s' $(seq 1 $((i*45))))\"; done",
			"printf 'tab\\tseparated\\tcolumns\\n'; printf '%079d|\\n' 0",
		)
		// End at the last prompt, with the shell waiting for input.
		if i := bytes.LastIndex(data, []byte(prompt)); err == nil && i >= 0 {
			data = data[:i+len(prompt)]
		}
		return data, err
	},
}

func main() {
	out := flag.String("out", "testdata/screen", "directory for NAME.bin files")
	flag.Parse()
	outSet := false
	flag.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	names := flag.Args()
	if len(names) == 0 {
		for n := range scripts {
			names = append(names, n)
		}
	}
	failed := false
	for _, name := range names {
		dir := *out
		sc, ok := scripts[name]
		if !ok {
			sc, ok = reflowScripts[name]
			if !outSet {
				dir = "screen/testdata" // not a golden: keep it out of testdata/screen
			}
		}
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown script %q\n", name)
			failed = true
			continue
		}
		if err := record(dir, name, sc); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func record(out, name string, sc script) error {
	dir, err := os.MkdirTemp("", "record-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := []string{
		"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "HOME=" + dir,
		"PATH=/usr/local/bin:/usr/bin:/bin", "PS1=" + prompt, "LESSHISTFILE=-", "TZ=UTC",
	}
	data, err := sc(dir, env)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, name+".bin"), data, 0o644); err != nil {
		return err
	}
	golden := filepath.Join(out, name+".golden")
	if _, isReflow := reflowScripts[name]; isReflow {
		golden = "" // replayed and resized by the reflow test, compared with itself
	}
	if _, err := os.Stat(golden); golden != "" && errors.Is(err, os.ErrNotExist) {
		// The size header tells the test how to replay; -update fills the rest.
		os.WriteFile(golden, []byte(fmt.Sprintf("size %d %d\n", cols, rows)), 0o644)
	}
	fmt.Printf("%s: %d bytes\n", name, len(data))
	return nil
}
