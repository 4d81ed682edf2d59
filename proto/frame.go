package proto

import (
	"fmt"
	"strings"
)

// Type is the one-byte frame type.
type Type uint8

// Frame types sent by the host to the sidecar.
const (
	TypeOpen   Type = 0x01
	TypeInput  Type = 0x02
	TypeResize Type = 0x03
	TypeClose  Type = 0x04
	TypeCredit Type = 0x05
)

// Frame types sent by the sidecar to the host.
const (
	TypeOpened Type = 0x81
	TypeOutput Type = 0x82
	TypeExit   Type = 0x83
	TypeError  Type = 0x84
)

// Limits of the wire format.
const (
	HeaderSize = 5        // u32 length + u8 type
	MaxFrame   = 16 << 20 // largest allowed total (type byte + body)
	MaxID      = 65535    // longest terminal id in bytes (u16 length prefix)
	// MaxData is the largest payload that fits in one data frame with the
	// longest possible id.
	MaxData = MaxFrame - 1 - 2 - MaxID
)

// String names the frame type as the protocol does.
func (t Type) String() string {
	switch t {
	case TypeOpen:
		return "OPEN"
	case TypeInput:
		return "INPUT"
	case TypeResize:
		return "RESIZE"
	case TypeClose:
		return "CLOSE"
	case TypeCredit:
		return "CREDIT"
	case TypeSignal:
		return "SIGNAL"
	case TypeForeground, TypeForegroundInfo:
		return "FOREGROUND"
	case TypeOpened:
		return "OPENED"
	case TypeOutput:
		return "OUTPUT"
	case TypeExit:
		return "EXIT"
	case TypeError:
		return "ERROR"
	case TypeHello, TypeHelloReply:
		return "HELLO"
	}
	return fmt.Sprintf("0x%02x", uint8(t))
}

// withArticle is the type's name after "a" or "an" as it is read aloud:
// "an OPEN", "a HELLO", "a 0x21".
func (t Type) withArticle() string {
	name := t.String()
	if strings.ContainsRune("AEIOU", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// Frame is one decoded frame. Body aliases the reader's buffer only until
// the next call to ReadFrame unless the reader was told otherwise.
type Frame struct {
	Type Type
	Body []byte
}
