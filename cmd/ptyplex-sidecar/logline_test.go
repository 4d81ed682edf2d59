package main

import (
	"bytes"
	"log"
	"strings"
	"testing"
)

// A log line quoting a 64 KiB terminal id reaches stderr cut to
// maxLogLine bytes, one line still, saying how much was left out; short
// lines go out as they are.
func TestLogLinesAreCut(t *testing.T) {
	var out bytes.Buffer
	l := log.New(lineCutter{&out}, "p: ", 0)
	l.Printf("short %q", "id")
	l.Printf("OPEN refused: terminalId %q", strings.Repeat("x", 64<<10))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `p: short "id"` {
		t.Fatalf("lines %q", lines)
	}
	if len(lines[1])+1 > maxLogLine || !strings.HasSuffix(lines[1], "bytes of this line left out)") {
		t.Errorf("long line of %d bytes ends %q", len(lines[1]), lines[1][max(0, len(lines[1])-60):])
	}
}

// Control characters in a message are escaped, its final newline kept;
// a message without them goes out as it is.
func TestLogLinesEscapeControls(t *testing.T) {
	var out bytes.Buffer
	l := log.New(lineEscaper{&out}, "p: ", 0)
	l.Printf("plain é %q", "id")
	l.Printf("cannot start %s", "s\x00h\x1b[31m\nforged \xff")
	want := "p: plain é \"id\"\np: cannot start s\\x00h\\e[31m\\nforged \\xff\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
