package proto

import (
	"encoding/binary"
	"fmt"
	"io"
)

// AppendFrame appends one encoded frame to dst.
func AppendFrame(dst []byte, t Type, body []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(1+len(body)))
	dst = append(dst, byte(t))
	return append(dst, body...)
}

// AppendDataFrame appends an INPUT or OUTPUT frame for id carrying data,
// without building the body separately.
func AppendDataFrame(dst []byte, t Type, id string, data []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(1+2+len(id)+len(data)))
	dst = append(dst, byte(t))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(id)))
	dst = append(dst, id...)
	return append(dst, data...)
}

// WriteFrame encodes one frame and writes it with a single Write call.
func WriteFrame(w io.Writer, t Type, body []byte) error {
	if 1+len(body) > MaxFrame {
		return fmt.Errorf("%s frame body of %d bytes exceeds the %d byte limit", t, len(body), MaxFrame-1)
	}
	_, err := w.Write(AppendFrame(make([]byte, 0, HeaderSize+len(body)), t, body))
	return err
}
