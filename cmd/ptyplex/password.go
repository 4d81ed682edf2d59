//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// passwordPrompt asks for the secret, in the words interminai uses.
const passwordPrompt = "Type your secret or password and press Enter."

// readPassword shows the program's prompt on stderr and reads one line
// from the controlling terminal with echo off. The secret never touches
// the command line, the environment or our stdout.
func readPassword(socket string) ([]byte, bool) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: --password needs a terminal to read the password from, and there is none: %v\n", err)
		return nil, false
	}
	defer tty.Close()
	fd := int(tty.Fd())
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: --password needs a terminal to read the password from: %v\n", err)
		return nil, false
	}

	var out wire.OutputData
	if !call(socket, map[string]any{"type": "OUTPUT", "format": "ascii"}, &out) {
		return nil, false
	}

	noEcho := *saved
	noEcho.Lflag &^= unix.ECHO
	noEcho.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &noEcho); err != nil {
		fmt.Fprintf(os.Stderr, "\nError: cannot turn off terminal echo for the password: %v\n", err)
		return nil, false
	}
	restore := func() { unix.IoctlSetTermios(fd, ioctlSetTermios, saved) }
	// Echo goes off before the prompt, so nothing typed ahead is shown.
	// Scripts written for interminai wait for this sentence; keep it as
	// is. The program's prompt comes last, as interminai shows it, so that
	// the cursor stands where the program's does.
	fmt.Fprintln(os.Stderr, passwordPrompt+" (echo is off)")
	fmt.Fprint(os.Stderr, promptLines(out))
	// Ctrl-C while typing must not leave the user's terminal without echo.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; ok {
			restore()
			fmt.Fprintln(os.Stderr)
			os.Exit(130)
		}
	}()
	line, err := bufio.NewReader(tty).ReadString('\n')
	restore()
	fmt.Fprintln(os.Stderr)
	if err != nil && line == "" {
		fmt.Fprintf(os.Stderr, "Error: no password read from the terminal: %v\n", err)
		return nil, false
	}
	return []byte(strings.TrimRight(line, "\r\n")), true
}

// promptLines is what the program is asking: the nearest non-empty line
// above the cursor's, and the cursor's line, followed by a space.
func promptLines(out wire.OutputData) string {
	lines := strings.Split(strings.TrimSuffix(out.Screen, "\n"), "\n")
	row := out.Cursor.Row
	if row >= len(lines) {
		return ""
	}
	var b strings.Builder
	for i := row - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			b.WriteString(lines[i] + "\n")
			break
		}
	}
	b.WriteString(lines[row] + " ")
	return b.String()
}
