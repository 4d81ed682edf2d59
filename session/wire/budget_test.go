//go:build unix

package wire

import "testing"

// TestBudgetWindow: lines farthest from the anchor go first (the top on a
// tie), blank lines cost nothing, blank rows left at an edge of what is
// kept join the cut beside them, and an anchor past the end is the end.
func TestBudgetWindow(t *testing.T) {
	lines := []string{"aaa", "bbb", "ccc", "ddd", "eee"} // 4 characters each with its newline
	for _, c := range []struct {
		name   string
		texts  []string
		anchor int
		max    int
		want   Window
	}{
		{"fits", lines, 2, 20, Window{}},
		{"shell: the cursor on the last line cuts the top", lines, 4, 8, Window{Top: 3, TopChars: 12}},
		{"anchor past the end is the end", lines, 9, 8, Window{Top: 3, TopChars: 12}},
		{"anchor before the start is the start", lines, -3, 8, Window{Bottom: 3, BottomChars: 12}},
		{"centre: the top goes on a tie", lines, 2, 8, Window{Top: 2, TopChars: 8, Bottom: 1, BottomChars: 4}},
		{"editor: both ends", lines, 1, 4, Window{Top: 1, TopChars: 4, Bottom: 3, BottomChars: 12}},
		{"nothing fits", lines, 2, 3, Window{Top: 3, TopChars: 12, Bottom: 2, BottomChars: 8}},
		{"blank lines are free; those under a cut join it", []string{"aaa", "", "  ", "bbb"}, 3, 4, Window{Top: 3, TopChars: 4}},
		{"blank lines in the middle stay", []string{"aaa", "bbb", "", "ccc"}, 3, 8, Window{Top: 1, TopChars: 4}},
		{"blank rows above a cut below join it", []string{"aaa", "bbb", "", "", "ccc"}, 0, 8, Window{Bottom: 3, BottomChars: 4}},
		{"empty", nil, 0, 1, Window{}},
	} {
		if got := BudgetWindow(c.texts, c.anchor, c.max); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestAnchor: the cursor's row, or the last line above it, or the first.
func TestAnchor(t *testing.T) {
	for _, c := range []struct {
		nums      []int
		row, want int
	}{
		{[]int{1, 2, 3, 4}, 3, 2},
		{[]int{-2, -1, 1, 2}, 10, 3},
		{[]int{5, 8, 9}, 6, 0},
		{[]int{5, 8, 9}, 2, 0},
		{nil, 1, 0},
	} {
		if got := Anchor(c.nums, c.row); got != c.want {
			t.Errorf("Anchor(%v, %d) = %d, want %d", c.nums, c.row, got, c.want)
		}
	}
}
