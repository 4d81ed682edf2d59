//go:build unix

package watchdog

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// tok stands for a run's token: 32 hex digits, as newToken makes them.
const tok = "00112233445566778899aabbccddeeff"

// tokened writes a test's input with "T" for the token.
func tokened(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "token T\n", "token "+tok+"\n"), "T ", tok+" ")
}

// A program in a terminal that reaches the pipe writes 70,000 bytes
// without a newline. The line is skipped, reading goes on, and the
// parent's lines still count, the one that ended the garbage included:
// only the real end of file ends the watchdog. (A bufio.Scanner stopped
// at the long line, which the watchdog took for its parent's death, and
// it killed every terminal.)
func TestOverlongLineIsSkipped(t *testing.T) {
	in := "token T\n" +
		"T + 100 1 /dev/pts/1 64 1 1\n" +
		"T + 200 2 /dev/pts/2 64 2 2\n" +
		// No newline: the parent's next line ends it, and counts.
		strings.Repeat("A", 70000) + "T - 100\n" +
		"short garbage, no newline" + "T + 400 4 /dev/pts/4 64 4 4\n" +
		strings.Repeat("B", 5000) + "\n" + // longer than any line of the parent's, shorter than the buffer
		"T + 300 3 /dev/pts/3 64 3 3\n" +
		"forged - 200\n" +
		"T bye\n"
	var log strings.Builder
	a := readAnnouncements(strings.NewReader(tokened(in)), &log)
	if a.err != nil {
		t.Fatalf("reading stopped with %v", a.err)
	}
	if !a.orderly {
		t.Errorf("the goodbye after the long line was not seen")
	}
	if _, ok := a.live[100]; ok {
		t.Errorf("the retire line after the long line was not applied")
	}
	if _, ok := a.live[200]; !ok {
		t.Errorf("terminal 200 was dropped (by a line without the token)")
	}
	if _, ok := a.live[300]; !ok {
		t.Errorf("the announcement after the long lines was not applied")
	}
	if _, ok := a.live[400]; !ok {
		t.Errorf("the announcement after short garbage was not applied")
	}
	if a.ignored != 4 {
		t.Errorf("ignored %d lines, want 4 (two long, one forged, one with garbage first)", a.ignored)
	}
	for _, want := range []string{"skipping a line of more than 4096 bytes", "ignoring a line without this run's token"} {
		if strings.Count(log.String(), want) != 1 {
			t.Errorf("the log does not say %q once:\n%s", want, log.String())
		}
	}
}

// A long line still being written when the pipe ends is skipped too, and
// the end of file is reported as such.
func TestOverlongLineAtEOF(t *testing.T) {
	a := readAnnouncements(strings.NewReader(tokened("token T\nT + 100 1 /dev/pts/1 64 1 1\n"+strings.Repeat("A", 200000))), io.Discard)
	if a.err != nil || a.orderly || len(a.live) != 1 || a.ignored != 1 {
		t.Errorf("got err %v, orderly %v, %d live, %d ignored; want end of file, 1 live, 1 ignored", a.err, a.orderly, len(a.live), a.ignored)
	}
}

// A line of exactly maxLine bytes is the parent's longest and is read; a
// last line without a newline is read as well.
func TestLineLimits(t *testing.T) {
	prefix := tokened("T + 100 1 /dev/pts/")
	pts := "/dev/pts/" + strings.Repeat("x", maxLine-len(prefix)-len(" 64 1 1"))
	line := tok + " + 100 1 " + pts + " 64 1 1"
	if len(line) != maxLine {
		t.Fatalf("test line is %d bytes", len(line))
	}
	a := readAnnouncements(strings.NewReader(tokened("token T\n")+line+tokened("\nT bye")), io.Discard)
	if a.live[100].PTS != pts || !a.orderly || a.ignored != 0 {
		t.Errorf("got %+v", a)
	}
	// One byte more and it is someone else's.
	a = readAnnouncements(strings.NewReader(tokened("token T\n")+"x"+line+"\n"), io.Discard)
	if a.ignored != 1 {
		t.Errorf("a line of %d bytes: %+v, want it ignored", len(line)+1, a)
	}
}

type failingReader struct{ data io.Reader }

func (f *failingReader) Read(b []byte) (int, error) {
	n, err := f.data.Read(b)
	if err == io.EOF {
		return n, errors.New("input/output error")
	}
	return n, err
}

// A read error is not an end of file: it is reported, so that Run waits
// for the parent instead of killing the terminals of a live one.
func TestReadErrorIsNotEOF(t *testing.T) {
	a := readAnnouncements(&failingReader{strings.NewReader(tokened("token T\nT + 100 1 /dev/pts/1 64 1 1\n"))}, io.Discard)
	if a.err == nil || len(a.live) != 1 {
		t.Errorf("got err %v and %d live, want the error and 1 live", a.err, len(a.live))
	}
}
