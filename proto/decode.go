package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// Msg is one decoded host frame: one of OpenRequest, Input, Resize, Close,
// Credit, Signal, Foreground, Hello, Ping, List, Attach, Detach, Stop,
// Upgrade, or Unknown for a type this package does not know.
type Msg interface {
	// FrameType is the type of the frame the message was decoded from.
	FrameType() Type
}

// OpenRequest is a decoded OPEN: the seed protocol's fields, and the
// persistent server's, which it validates with Persist.
type OpenRequest struct {
	Open
	journal, detached, orphan json.RawMessage
}

// Input is a decoded INPUT. Data aliases the frame's body.
type Input struct {
	TerminalID string
	Data       []byte
}

// Ping is a decoded PING: its body, to be sent back in the PONG.
type Ping struct{ Body []byte }

// List is a decoded LIST.
type List struct{}

// Detach is a decoded DETACH. To, when set, names the viewer the holder
// hands the terminal over to (see ParseDetach).
type Detach struct {
	TerminalID string  `json:"terminalId"`
	To         *uint64 `json:"to,omitempty"`
}

// Stop is a decoded STOP.
type Stop struct{}

// Unknown is a frame of a type this package does not decode; the seed
// protocol has receivers ignore those, so that newer peers can talk to
// older ones.
type Unknown struct{ Type Type }

func (OpenRequest) FrameType() Type { return TypeOpen }
func (Input) FrameType() Type       { return TypeInput }
func (Resize) FrameType() Type      { return TypeResize }
func (Close) FrameType() Type       { return TypeClose }
func (Credit) FrameType() Type      { return TypeCredit }
func (Signal) FrameType() Type      { return TypeSignal }
func (Foreground) FrameType() Type  { return TypeForeground }
func (Hello) FrameType() Type       { return TypeHello }
func (Ping) FrameType() Type        { return TypePing }
func (List) FrameType() Type        { return TypeList }
func (Attach) FrameType() Type      { return TypeAttach }
func (Detach) FrameType() Type      { return TypeDetach }
func (Stop) FrameType() Type        { return TypeStop }
func (Upgrade) FrameType() Type     { return TypeUpgrade }
func (Revive) FrameType() Type      { return TypeRevive }
func (u Unknown) FrameType() Type   { return u.Type }

// DecodeError is a frame Decode could not decode. Its text is the
// complaint to log or to send in an ERROR; ID is the terminal id the
// body named as far as it could be read ("" when none), which is where a
// server that answers the malformed frame addresses its ERROR. What to do
// with it (answer, log, drop) is the receiving server's choice, per type.
type DecodeError struct {
	Type Type
	ID   string
	// HasID is whether the body named an id at all. It differs from
	// ID != "" only for OPEN, which is answered even under an empty id
	// if that is what the host sent (see OpenErrorID).
	HasID bool
	Err   error
}

func (e *DecodeError) Error() string { return e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// idFrames names the frame types, but OPEN (parseOpen checks its own),
// whose JSON body names a terminal.
var idFrames = map[Type]string{
	TypeResize: "RESIZE", TypeClose: "CLOSE", TypeCredit: "CREDIT", TypeSignal: "SIGNAL",
	TypeForeground: "FOREGROUND", TypeAttach: "ATTACH", TypeDetach: "DETACH", TypeRevive: "REVIVE",
}

// Decode decodes a host frame into its typed message. A frame of an
// unknown type is no error: it decodes to Unknown. On an error the
// message is nil and the error a *DecodeError.
func Decode(f Frame) (Msg, error) {
	fail := func(id string, err error) (Msg, error) {
		return nil, &DecodeError{Type: f.Type, ID: id, HasID: id != "", Err: err}
	}
	if name := idFrames[f.Type]; name != "" {
		if err := checkSentIDs(f.Body); err != nil {
			// The requests a server answers (ATTACH, DETACH, REVIVE) are
			// refused under the id as decoded, U+FFFD in place of what
			// was bad; the others are only logged: addressed to that id,
			// a refusal could reach a terminal of that name, not the
			// sender's.
			id := ""
			if f.Type == TypeAttach || f.Type == TypeDetach || f.Type == TypeRevive {
				id, _ = SentID(f.Body)
			}
			return fail(id, fmt.Errorf("malformed %s: %w", name, err))
		}
	}
	switch f.Type {
	case TypeOpen:
		var w openWire
		o, err := parseOpen(f.Body, &w)
		if err != nil {
			id, ok := OpenErrorID(o, f.Body)
			return nil, &DecodeError{Type: f.Type, ID: id, HasID: ok, Err: err}
		}
		return OpenRequest{Open: o, journal: w.Journal, detached: w.Detached, orphan: w.Orphan}, nil
	case TypeInput:
		id, data, err := ParseData(f.Body)
		if err != nil {
			return fail("", err)
		}
		return Input{TerminalID: id, Data: data}, nil
	case TypeResize:
		r, err := ParseResize(f.Body)
		if err != nil {
			return fail(r.TerminalID, err)
		}
		return r, nil
	case TypeClose:
		c, err := ParseClose(f.Body)
		if err != nil {
			return fail(c.TerminalID, err)
		}
		return c, nil
	case TypeCredit:
		c, err := ParseCredit(f.Body)
		if err != nil {
			return fail(c.TerminalID, err)
		}
		return c, nil
	case TypeSignal:
		s, err := ParseSignal(f.Body)
		if err != nil {
			return fail(s.TerminalID, err)
		}
		return s, nil
	case TypeForeground:
		q, err := ParseForeground(f.Body)
		if err != nil {
			return fail(q.TerminalID, err)
		}
		return q, nil
	case TypeHello:
		h, err := ParseHello(f.Body)
		if err != nil {
			return fail("", err)
		}
		return h, nil
	case TypePing:
		return Ping{Body: f.Body}, nil
	case TypeList:
		return List{}, nil
	case TypeAttach:
		a, id, err := ParseAttach(f.Body)
		if err != nil {
			return fail(id, err)
		}
		return a, nil
	case TypeDetach:
		d, id, err := ParseDetach(f.Body)
		if err != nil {
			return fail(id, err)
		}
		return d, nil
	case TypeStop:
		// STOP ends every terminal: only what a host means as one (an
		// empty body or a JSON object, `{}`) is taken as one, not bytes
		// that are something else gone astray.
		if len(bytes.TrimSpace(f.Body)) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(f.Body, &obj); err != nil || obj == nil {
				return fail("", errors.New("malformed STOP: want {} (a JSON object) or no body"))
			}
		}
		return Stop{}, nil
	case TypeRevive:
		var w struct {
			TerminalID *string         `json:"terminalId"`
			Credit     json.RawMessage `json:"credit"`
		}
		if err := unmarshalExact(f.Body, &w); err != nil || w.TerminalID == nil {
			return fail(RecoverID(f.Body), errors.New(`malformed REVIVE: want {"terminalId": ...}`))
		}
		r := Revive{TerminalID: *w.TerminalID}
		if len(w.Credit) > 0 && string(w.Credit) != "null" {
			n, err := ParseCount(w.Credit)
			if err != nil {
				return fail(r.TerminalID, fmt.Errorf("malformed REVIVE: credit: %v", err))
			}
			r.Credit = &n
		}
		return r, nil
	case TypeUpgrade:
		var u Upgrade
		if err := unmarshalExact(f.Body, &u); err != nil || !filepath.IsAbs(u.Path) {
			return fail("", errors.New(`malformed UPGRADE: want {"path": "/absolute/path/of/the/new/binary", "version": ...}`))
		}
		return u, nil
	}
	return Unknown{Type: f.Type}, nil
}
