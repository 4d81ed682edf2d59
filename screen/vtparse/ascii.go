package vtparse

import "encoding/binary"

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// asciiRun returns how many bytes at the start of b are printable ASCII
// (0x20-0x7e). Text is most of what programs write, so the scan looks at
// eight bytes at a time: a word is clean when no byte is below 0x20 (the
// subtraction borrows into a byte's top bit) and none is above 0x7e (the
// addition carries into it, or it was set already). Only the word that
// holds the end of the run is scanned byte by byte.
func asciiRun(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if ((x-lsb*0x20)&^x|(x+lsb)|x)&msb != 0 {
			break
		}
	}
	for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
		i++
	}
	return i
}
