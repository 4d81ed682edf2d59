// Command demo is a small Go host built on the client package: it starts
// one ptyplex-sidecar, opens several terminals at once through it, prints
// their interleaved output labelled by terminal, and then their exit
// statuses.
//
//	go run ./examples/demo [-sidecar PATH]
//
// Without -sidecar it uses bin/ptyplex-sidecar (what `make build` makes),
// else the ptyplex-sidecar next to it or in PATH, and failing that builds
// one from this module with `go build`.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/client"
)

func main() {
	sidecar := flag.String("sidecar", "", "ptyplex-sidecar to use")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("demo: ")

	path, cleanup := findSidecar(*sidecar)
	defer cleanup()
	c, err := client.Start(client.Options{SidecarPath: path})
	if err != nil {
		log.Fatal(err)
	}
	out := &console{w: os.Stdout}
	fmt.Printf("sidecar %s: opening 6 terminals at once\n\n", path)

	// Every terminal runs at the same time; each has its own goroutine
	// that reads (and so grants credit) and prints.
	jobs := []job{
		{label: "shell", run: shell},
		{label: "ls", opts: client.OpenOptions{Cmd: "ls", Args: []string{"--color=always", "-F", "/"}, Cols: 72}},
		{label: "exit3", opts: client.OpenOptions{Cmd: "sh", Args: []string{"-c", `echo "working..."; sleep 0.2; echo "giving up"; exit 3`}}},
		{label: "killed", opts: client.OpenOptions{Cmd: "sh", Args: []string{"-c", `echo "about to be killed"; sleep 0.1; kill -TERM $$`}}},
		{label: "flood", run: flood},
		{label: "sleeper", run: sleeper},
	}
	results := make([]string, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = j.do(c, out)
		}()
	}
	wg.Wait()

	fmt.Println("\nexit statuses:")
	for i, j := range jobs {
		fmt.Printf("  %-8s %s\n", j.label, results[i])
	}
	if err := c.Close(); err != nil {
		log.Fatal(err)
	}
}

// job is one terminal of the demo: either plain options whose output is
// printed as it comes, or a function that drives the terminal itself.
type job struct {
	label string
	opts  client.OpenOptions
	run   func(c *client.Client, p *printer) (*client.Terminal, error)
}

func (j job) do(c *client.Client, out *console) string {
	p := &printer{label: j.label, out: out}
	var term *client.Terminal
	var err error
	if j.run != nil {
		term, err = j.run(c, p)
	} else {
		j.opts.ID = j.label
		term, err = c.Open(context.Background(), j.opts)
		if err == nil {
			_, err = io.Copy(p, term)
		}
	}
	if err != nil {
		return "error: " + err.Error()
	}
	p.flush()
	st, err := term.Wait()
	if err != nil {
		return "error: " + err.Error()
	}
	return st.String()
}

// shell answers scripted input: it types each command once the prompt is
// back, like a person (or an agent) would.
func shell(c *client.Client, p *printer) (*client.Terminal, error) {
	term, err := c.Open(context.Background(), client.OpenOptions{
		ID: "shell", Cmd: "sh", Env: map[string]string{"PS1": "demo$ "},
	})
	if err != nil {
		return nil, err
	}
	script := []string{"echo hello from $0, pid $$", "echo $((6 * 7))", "exit"}
	buf := make([]byte, 4096)
	for {
		n, err := term.Read(buf)
		p.Write(buf[:n])
		if err == io.EOF {
			return term, nil
		}
		if err != nil {
			return nil, err
		}
		if len(script) > 0 && strings.HasSuffix(p.partial(), "demo$ ") {
			fmt.Fprintf(term, "%s\n", script[0])
			script = script[1:]
		}
	}
}

// flood prints seq 1 500000 (3,888,895 bytes, the terminal turning each
// newline into CRLF) through a 4 KiB credit window: the child runs only as
// fast as we read, and we never hold more than the window.
func flood(c *client.Client, p *printer) (*client.Terminal, error) {
	const window = 4 << 10
	term, err := c.Open(context.Background(), client.OpenOptions{
		ID: "flood", Cmd: "seq", Args: []string{"1", "500000"}, Window: window,
	})
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1024)
	var total, peak, reads int
	var tail []byte
	nextReport := 1 << 20
	for {
		peak = max(peak, term.Buffered())
		n, err := term.Read(buf)
		total += n
		reads++
		tail = append(tail, buf[:n]...)
		if len(tail) > 64 {
			tail = tail[len(tail)-64:]
		}
		if total >= nextReport {
			p.Write([]byte(fmt.Sprintf("%.1f MB received, at most %d bytes buffered so far\n", float64(total)/1e6, peak)))
			nextReport += 1 << 20
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	lines := strings.Split(strings.TrimSpace(string(tail)), "\r\n")
	p.Write([]byte(fmt.Sprintf("done: %d bytes in %d reads, last line %q, never more than %d bytes buffered (window %d)\n",
		total, reads, lines[len(lines)-1], peak, window)))
	return term, nil
}

// sleeper would sleep for ten minutes; we close it, and the sidecar hangs
// it up.
func sleeper(c *client.Client, p *printer) (*client.Terminal, error) {
	term, err := c.Open(context.Background(), client.OpenOptions{ID: "sleeper", Cmd: "sleep", Args: []string{"600"}})
	if err != nil {
		return nil, err
	}
	p.Write([]byte(fmt.Sprintf("pid %d sleeping; closing it in 300ms\n", term.Pid())))
	time.Sleep(300 * time.Millisecond)
	term.Close()
	_, err = io.Copy(p, term)
	return term, err
}

// console serialises whole lines from all terminals onto stdout.
type console struct {
	mu sync.Mutex
	w  io.Writer
}

// printer labels one terminal's output line by line.
type printer struct {
	label string
	out   *console
	mu    sync.Mutex
	line  []byte // the unfinished line
}

func (p *printer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = append(p.line, b...)
	for {
		i := bytes.IndexByte(p.line, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.emit(bytes.TrimRight(p.line[:i], "\r"))
		p.line = p.line[i+1:]
	}
}

func (p *printer) partial() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.line)
}

func (p *printer) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.line) > 0 {
		p.emit(p.line)
		p.line = nil
	}
}

func (p *printer) emit(line []byte) {
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	// \x1b[0m ends any colour the line left on.
	fmt.Fprintf(p.out.w, "%-8s| %s\x1b[0m\n", p.label, line)
}

// findSidecar returns the sidecar to run, building one if there is none.
func findSidecar(flagPath string) (string, func()) {
	if flagPath != "" {
		return flagPath, func() {}
	}
	// The repository's own build (make build) comes first, so that a
	// stale ptyplex-sidecar installed in PATH does not stand in for it.
	if p, err := filepath.Abs(filepath.Join("bin", client.SidecarName)); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p, func() {}
		}
	}
	if p, err := client.FindSidecar(); err == nil {
		return p, func() {}
	}
	dir, err := os.MkdirTemp("", "ptyplex-demo-")
	if err != nil {
		log.Fatal(err)
	}
	p := filepath.Join(dir, client.SidecarName)
	fmt.Fprintf(os.Stderr, "building %s ...\n", client.SidecarName)
	build := exec.Command("go", "build", "-o", p, "github.com/ptyplex/ptyplex/cmd/ptyplex-sidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		log.Fatalf("no %s found and building one failed: %v", client.SidecarName, err)
	}
	return p, func() { os.RemoveAll(dir) }
}
