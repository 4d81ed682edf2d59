package screen

import (
	"slices"
	"testing"
)

// The main screen's lines stay readable while the alternate screen is
// shown, each screen keeps its own saved cursor, and tab stops are
// listed as set.
func TestBothScreensSavedCursorsAndTabs(t *testing.T) {
	s := New(20, 4, Options{})
	s.Write([]byte("main one\r\nmain two\x1b[2;3H\x1b[?1049h\x1b[Halt one\x1b[3;5H\x1b7\x1b[3g\x1b[1;4H\x1bH\x1b[1;11H\x1bH"))
	if got := string(s.AppendScreenLine(nil, false, 2, false)); got != "main two" {
		t.Fatalf("main line 2 while the alternate screen is shown: %q", got)
	}
	if got := string(s.AppendScreenLine(nil, true, 1, false)); got != "alt one" {
		t.Fatalf("alternate line 1: %q", got)
	}
	if r, c, ok := s.SavedCursor(false); !ok || r != 1 || c != 2 {
		t.Fatalf("main saved cursor %d,%d %v, want 1,2 (saved by ?1049h)", r, c, ok)
	}
	if r, c, ok := s.SavedCursor(true); !ok || r != 2 || c != 4 {
		t.Fatalf("alternate saved cursor %d,%d %v, want 2,4", r, c, ok)
	}
	if got := s.TabStops(); !slices.Equal(got, []int{3, 10}) {
		t.Fatalf("tab stops %v", got)
	}
}
