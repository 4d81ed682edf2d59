package vtparse

import (
	"slices"
	"testing"
)

func TestWithoutSubParams(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		same bool // no sub-parameters: the sequence itself comes back
	}{
		{"\x1b[2;3H", []int{2, 3}, true},
		{"\x1b[2:3H", []int{2}, false},
		{"\x1b[2:3;4:5:6;7H", []int{2, 4, 7}, false},
		{"\x1b[:3;4H", []int{0, 4}, false},
		{"\x1b[?1:2h", []int{1}, false},
	} {
		var got, orig *Seq
		var p Parser
		p.Parse([]byte(tc.in), csiFunc(func(s *Seq) {
			orig = s
			got = s.WithoutSubParams(nil)
		}))
		if got == nil {
			t.Fatalf("%q: no CSI", tc.in)
		}
		if !slices.Equal(got.Params, tc.want) || len(got.Sub) != len(got.Params) || slices.Contains(got.Sub, true) {
			t.Errorf("%q: params %v sub %v, want %v and no sub-parameters", tc.in, got.Params, got.Sub, tc.want)
		}
		if (got == orig) != tc.same {
			t.Errorf("%q: returned the sequence itself: %v, want %v", tc.in, got == orig, tc.same)
		}
	}
}

// csiFunc is a Handler that passes each CSI to a function.
type csiFunc func(*Seq)

func (f csiFunc) Print([]byte)   {}
func (f csiFunc) PrintRune(rune) {}
func (f csiFunc) Execute(byte)   {}
func (f csiFunc) CSI(s *Seq)     { f(s) }
func (f csiFunc) ESC(*Seq)       {}
func (f csiFunc) OSC(*Seq)       {}
func (f csiFunc) String(*Seq)    {}
