//go:build unix

package procwait

import (
	"bytes"
	"os"
	"strconv"
)

// Alive reports whether pid exists and has not exited (a zombie has).
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}
