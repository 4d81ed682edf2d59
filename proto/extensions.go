package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Frame types added after the seed protocol (see PROTOCOL.md, "SIGNAL and
// FOREGROUND"). A sidecar that predates them drops them like any unknown
// type; hosts learn whether they are served from OPENED's features.
const (
	TypeSignal     Type = 0x06 // host to sidecar: signal the foreground group
	TypeForeground Type = 0x07 // host to sidecar: ask for the foreground process
	// TypeForegroundInfo answers TypeForeground.
	TypeForegroundInfo Type = 0x85
)

// Feature names a sidecar lists in OPENED's features field.
const (
	FeatureSignal     = "signal"
	FeatureForeground = "foreground"
	// FeatureCommandLine says OPEN's commandLine is served: listed on
	// Windows only, where a child is given a command line.
	FeatureCommandLine = "commandLine"
)

// Features is what this version of the sidecar serves beyond the seed
// protocol, as announced in every OPENED.
var Features = []string{FeatureSignal, FeatureForeground}

// Signal is the body of a SIGNAL frame. Signal is a name ("SIGINT", "INT",
// any case) or a number, kept as the text the host sent so that the sidecar
// can quote it in an error. Target says who gets it: the foreground
// process group (SignalForeground, also when empty), or the child alone
// (SignalChild, node-pty's kill(signal)).
type Signal struct {
	TerminalID string `json:"terminalId"`
	Signal     string `json:"signal"`
	Target     string `json:"target,omitempty"`
}

// SIGNAL targets.
const (
	SignalForeground = "foreground"
	SignalChild      = "child"
)

// CheckTarget says whether s names a target this sidecar knows.
func (s Signal) CheckTarget() error {
	switch s.Target {
	case "", SignalForeground, SignalChild:
		return nil
	}
	return fmt.Errorf("unknown target %q (%q or %q)", s.Target, SignalForeground, SignalChild)
}

// Foreground is the body of a FOREGROUND request.
type Foreground struct {
	TerminalID string `json:"terminalId"`
}

// ForegroundInfo is the body of the FOREGROUND reply. PID is the
// foreground process group's id (its leader's pid); Process is the leader's
// argv[0] (its kernel command name when argv is empty). Both are omitted
// when the terminal has no foreground process group any more.
type ForegroundInfo struct {
	PID        int    `json:"pid,omitempty"`
	Process    string `json:"process,omitempty"`
	TerminalID string `json:"terminalId"`
}

type signalWire struct {
	TerminalID *string         `json:"terminalId"`
	Signal     json.RawMessage `json:"signal"`
	Target     *string         `json:"target"`
}

// ParseSignal decodes a SIGNAL body. signal may be a JSON string or a whole
// number; either way it comes back as text. When the body is malformed the
// terminal id is still returned if one could be recovered.
func ParseSignal(body []byte) (Signal, error) {
	var w signalWire
	if err := unmarshalExact(body, &w); err != nil {
		return Signal{TerminalID: RecoverID(body)}, fmt.Errorf("malformed SIGNAL: %w", err)
	}
	if w.TerminalID == nil {
		return Signal{}, errors.New("malformed SIGNAL: missing terminalId")
	}
	s := Signal{TerminalID: *w.TerminalID}
	if w.Target != nil {
		s.Target = *w.Target // checked by CheckTarget, so that an ERROR can say so
	}
	raw := bytes.TrimSpace(w.Signal)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return s, errors.New("malformed SIGNAL: missing signal")
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &s.Signal); err != nil {
			return s, fmt.Errorf("malformed SIGNAL: signal: %w", err)
		}
	default:
		n, err := strconv.ParseUint(string(raw), 10, 8)
		if err != nil {
			return s, fmt.Errorf("malformed SIGNAL: signal %s is neither a name nor a number in 1..64", raw)
		}
		s.Signal = strconv.FormatUint(n, 10)
	}
	return s, nil
}

// ParseForeground decodes a FOREGROUND request body.
func ParseForeground(body []byte) (Foreground, error) {
	var f Foreground
	if err := unmarshalExact(body, &f); err != nil {
		return f, fmt.Errorf("malformed FOREGROUND: %w", err)
	}
	return f, nil
}
