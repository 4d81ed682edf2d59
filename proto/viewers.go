package proto

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Modes of ATTACH (its "mode" field). A holder is the one connection
// whose INPUT, RESIZE, CLOSE, SIGNAL and FOREGROUND act on the terminal
// and whose credit throttles it; a viewer receives the same OUTPUT from
// its own offset, within its own credit, and acts on nothing. A viewer
// that falls out of the journal is skipped forward to a SNAPSHOT rather
// than holding the terminal back.
const (
	AttachHold = "hold"
	AttachView = "view"
)

// ListedViewer is one viewer in LISTED: its number (what a holder's
// DETACH "to" names), the offset of the next byte it is to be sent, and
// how many bytes it was skipped past (SNAPSHOTs instead) since it attached,
// and those that left the journal before it was sent them (it can never
// get them).
type ListedViewer struct {
	Lost   uint64 `json:"lost"`
	Sent   uint64 `json:"sent"`
	Viewer uint64 `json:"viewer"`
}

// parseAttachMode reads ATTACH's mode: absent, null, "hold" or "view".
func parseAttachMode(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var m string
	if err := json.Unmarshal(raw, &m); err != nil || (m != AttachHold && m != AttachView) {
		return "", fmt.Errorf("malformed ATTACH: mode must be %q or %q, not %s", AttachHold, AttachView, raw)
	}
	if m == AttachHold {
		m = ""
	}
	return m, nil
}

// ParseDetach decodes DETACH: {"terminalId": ...}, and from a holder that
// hands the terminal over to one of its viewers, "to": that viewer's
// number (a whole number, see ParseCount).
func ParseDetach(body []byte) (d Detach, id string, err error) {
	var w struct {
		TerminalID string          `json:"terminalId"`
		To         json.RawMessage `json:"to"`
	}
	if err := unmarshalExact(body, &w); err != nil {
		return d, RecoverID(body), errors.New(`malformed DETACH: want {"terminalId": ...}`)
	}
	d.TerminalID = w.TerminalID
	if len(w.To) > 0 && string(w.To) != "null" {
		n, err := ParseCount(w.To)
		if err != nil || n == 0 {
			return d, d.TerminalID, fmt.Errorf("malformed DETACH: to: %s is not a viewer's number (1 or more, from its ATTACHED)", w.To)
		}
		d.To = &n
	}
	return d, d.TerminalID, nil
}
