//go:build unix

package wire

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in         string
		cols, rows int
	}{
		{"80x24", 80, 24},
		{"1x1", 1, 1},
		{"4096x4096", 4096, 4096},
		{"80x+24", 80, 24},
	} {
		c, r, err := ParseSize(tc.in)
		if err != nil || c != tc.cols || r != tc.rows {
			t.Errorf("ParseSize(%q) = %d, %d, %v; want %d, %d", tc.in, c, r, err, tc.cols, tc.rows)
		}
	}
	for _, in := range []string{"", "80", "80x", "x24", "80X24", " 80x24", "80x24 ", "80 x24", "80x24x1",
		"0x24", "80x0", "-80x24", "4097x24", "80x4097", "0x50x18", "80.0x24", "eightyx24"} {
		if _, _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted a size not of the form <cols>x<rows>", in)
		}
	}
}
