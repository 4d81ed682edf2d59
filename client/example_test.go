package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/ptyplex/ptyplex/client"
)

// A host starts one sidecar and opens terminals through it. The PTY turns
// "\n" into "\r\n", as a terminal would show it.
func Example() {
	c, err := client.Start(client.Options{}) // ptyplex-sidecar from next to us or PATH
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	term, err := c.Open(context.Background(), client.OpenOptions{
		Cmd:  "sh",
		Args: []string{"-c", "echo hello from $0; exit 3"},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, err := io.ReadAll(term) // until the child exits
	if err != nil {
		log.Fatal(err)
	}
	status, err := term.Wait()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n%v\n", out, status)
	// Output:
	// "hello from sh\r\n"
	// exit code 3
}

// Writing to a terminal types into it; the terminal echoes what it gets.
func ExampleTerminal_Write() {
	c, err := client.Start(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	term, err := c.Open(context.Background(), client.OpenOptions{ID: "calc", Cmd: "sh", Env: map[string]string{"PS1": ""}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(term, "echo $((6 * 7))\nexit\n")
	out, _ := io.ReadAll(term)
	fmt.Println(strings.Contains(string(out), "42\r\n"))
	// Output: true
}

// A terminal opened with a credit window never has more than that much
// unread output: a flooding child waits for the reader.
func ExampleOpenOptions_window() {
	c, err := client.Start(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	term, err := c.Open(context.Background(), client.OpenOptions{
		Cmd:    "head",
		Args:   []string{"-c", "1000000", "/dev/zero"},
		Window: 8 << 10,
	})
	if err != nil {
		log.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, term)
	fmt.Println(n, "bytes, at most 8 KiB of them buffered at any time")
	// Output: 1000000 bytes, at most 8 KiB of them buffered at any time
}

// A child killed by a signal reports it, with the shell's 128+N exit code.
func ExampleTerminal_Wait() {
	c, err := client.Start(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	term, err := c.Open(context.Background(), client.OpenOptions{Cmd: "sh", Args: []string{"-c", "kill -KILL $$"}})
	if err != nil {
		log.Fatal(err)
	}
	status, err := term.Wait()
	fmt.Println(status.Code, status.Signal, err)
	// Output: 137 SIGKILL <nil>
}

// Closing a terminal hangs it up; a child that does not ignore SIGHUP ends
// at once.
func ExampleTerminal_Close() {
	c, err := client.Start(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	term, err := c.Open(context.Background(), client.OpenOptions{Cmd: "sleep", Args: []string{"600"}})
	if err != nil {
		log.Fatal(err)
	}
	term.Close()
	status, _ := term.Wait()
	fmt.Println(status)
	// Output: killed by SIGHUP (exit code 129)
}

// A host whose terminals run on another machine, in a persistent sidecar
// named in the transport's argv, and survive the transport dropping: the
// client reconnects, reattaches each terminal where it was, and sends
// what was typed meanwhile. (Compiled, not run: it needs the host.)
func ExampleReconnectPolicy() {
	c, err := client.Start(client.Options{
		Transport: []string{"ssh", "-T", "build-box", "ptyplex-sidecar --persist work"},
		Reconnect: &client.ReconnectPolicy{
			QueueLimit: 64 << 10, // keys typed while disconnected, at most
			OnEvent:    func(e client.Event) { log.Print(e) },
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	term, err := c.Open(context.Background(), client.OpenOptions{Cmd: "bash", Detached: "park"})
	if err != nil {
		log.Fatal(err)
	}
	go io.Copy(term, strings.NewReader("make test\n"))
	io.Copy(io.Discard, term) // no gap, no repeat, across drops
}
