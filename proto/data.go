package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrBadData is returned for a data-frame body that cannot be split into a
// terminal id and a payload.
var ErrBadData = errors.New("malformed data frame")

// ParseData splits an INPUT or OUTPUT body into its terminal id and payload.
// The payload aliases body.
func ParseData(body []byte) (id string, data []byte, err error) {
	if len(body) < 2 {
		return "", nil, fmt.Errorf("%w: body of %d bytes has no id length", ErrBadData, len(body))
	}
	n := int(binary.LittleEndian.Uint16(body))
	if n == 0 {
		return "", nil, fmt.Errorf("%w: empty terminal id", ErrBadData)
	}
	if 2+n > len(body) {
		return "", nil, fmt.Errorf("%w: id length %d exceeds the %d bytes left", ErrBadData, n, len(body)-2)
	}
	idb := body[2 : 2+n]
	if !utf8.Valid(idb) {
		return "", nil, fmt.Errorf("%w: terminal id is not UTF-8", ErrBadData)
	}
	return string(idb), body[2+n:], nil
}

// DataBody builds an INPUT or OUTPUT body. It fails when the id is empty or
// longer than MaxID bytes.
func DataBody(id string, data []byte) ([]byte, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 2+len(id)+len(data))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(id)))
	b = append(b, id...)
	return append(b, data...), nil
}

// CheckID reports whether id is a valid terminal id: 1..MaxID bytes of UTF-8.
func CheckID(id string) error {
	switch {
	case id == "":
		return errors.New("terminal id is empty")
	case len(id) > MaxID:
		return fmt.Errorf("terminal id is %d bytes, the limit is %d", len(id), MaxID)
	case !utf8.ValidString(id):
		return errors.New("terminal id is not valid UTF-8")
	}
	return nil
}

// DataHeaderSize is how many bytes precede the payload of a data frame
// (INPUT or OUTPUT) for a terminal id of idLen bytes: the frame header,
// the u16 id length and the id.
func DataHeaderSize(idLen int) int { return HeaderSize + 2 + idLen }

// PutDataHeader fills in the header of a data frame of type typ whose
// payload already sits in frame after DataHeaderSize(len(id)) bytes, so
// that a reader can read straight into a frame buffer and label it after.
func PutDataHeader(frame []byte, typ Type, id string) {
	binary.LittleEndian.PutUint32(frame, uint32(len(frame)-4))
	frame[4] = byte(typ)
	binary.LittleEndian.PutUint16(frame[5:], uint16(len(id)))
	copy(frame[7:], id)
}
