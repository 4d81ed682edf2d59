package record

import (
	"fmt"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Magic is the first line of every fixture file. The trailing version
// number changes if the record layout ever does.
const Magic = "ptyplex-record 1\n"

// recordHeader is [u8 kind][u64 LE ns since start][u32 LE payload length].
const recordHeader = 1 + 8 + 4

// maxPayload bounds one record's payload: a full frame with its header is
// the largest thing we store.
const maxPayload = proto.HeaderSize + proto.MaxFrame

// Kind says what a record holds.
type Kind uint8

const (
	// FromHost is a frame the host sent to the sidecar; the payload is the
	// frame's full encoding.
	FromHost Kind = 'H'
	// FromSidecar is a frame the sidecar sent to the host; the payload is
	// the frame's full encoding.
	FromSidecar Kind = 'S'
	// HostEOF marks the moment the host closed the sidecar's stdin. It has
	// no payload.
	HostEOF Kind = 'E'
	// Note is an annotation for tools (a JSON object, see Annotation); the
	// sidecar never writes one.
	Note Kind = 'N'
)

func (k Kind) String() string {
	switch k {
	case FromHost:
		return "host"
	case FromSidecar:
		return "sidecar"
	case HostEOF:
		return "host-eof"
	case Note:
		return "note"
	}
	return fmt.Sprintf("kind(0x%02x)", uint8(k))
}

// Record is one entry of a fixture.
type Record struct {
	Kind Kind
	At   time.Duration // monotonic time since the recording began
	// Frame is the decoded frame for FromHost and FromSidecar records.
	Frame proto.Frame
	// Raw is the payload as stored: the frame's encoding, or a note's JSON.
	Raw []byte
}

// Annotation is the JSON body of a Note record. It tells the replayer how
// to compare one terminal's output when the child is not deterministic.
type Annotation struct {
	TerminalID string `json:"terminalId"`
	// Output is "exact" (the default: the concatenated output must match
	// byte for byte), "length" (only the byte count must match) or
	// "ignore" (output is not compared, nor waited for).
	Output string `json:"output"`
}

// Output comparison modes of an Annotation.
const (
	OutputExact  = "exact"
	OutputLength = "length"
	OutputIgnore = "ignore"
)
