//go:build unix

package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDim bounds the columns and rows of a session; the emulator clamps at
// the same value.
const MaxDim = 4096

// ParseSize parses "<cols>x<rows>", e.g. "80x24": decimal numbers and a
// lower-case x, nothing around them (interminai refuses "80X24" and " 80x24"
// too; like it, it takes a '+' before a number).
func ParseSize(s string) (cols, rows int, err error) {
	c, r, ok := strings.Cut(s, "x")
	if ok {
		cols, err1 := strconv.Atoi(c)
		rows, err2 := strconv.Atoi(r)
		if err1 == nil && err2 == nil && cols >= 1 && rows >= 1 && cols <= MaxDim && rows <= MaxDim {
			return cols, rows, nil
		}
	}
	return 0, 0, fmt.Errorf("Invalid size '%s': expected <cols>x<rows> such as 80x24 (each 1..%d)", s, MaxDim)
}
