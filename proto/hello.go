package proto

import (
	"encoding/json"
	"fmt"
	"runtime"
)

// The handshake (PROTOCOL.md, "HELLO"). The types sit apart from the
// per-terminal extensions (0x06, 0x07, 0x85) and from the persistent
// server's frames (0x20-0x23, 0xa0-0xa3). A sidecar that predates HELLO
// drops it like any unknown type, which is how a host recognises one: no
// answer.
const (
	TypeHello      Type = 0x10 // host to sidecar: who I am, what I speak
	TypeHelloReply Type = 0x90 // sidecar to host: the same about the sidecar
)

// ProtocolVersion is the frame protocol's major version. Peers with
// different values cannot talk; features announce everything compatible.
const ProtocolVersion = 1

// FeatureHello is announced by every peer that speaks the handshake.
const FeatureHello = "hello"

// Hello is the body of both HELLO frames. Version is the sender's build
// (free text, for messages); Protocol the major protocol version; Features
// what it serves beyond the seed protocol. OS and Arch are the sidecar's
// platform (GOOS/GOARCH), which a host may use to choose a binary.
//
// Env and Cwd are sent only by a --persist bridge to the persistent
// server: the bridge's own environment (NAME=value entries) and working
// directory, which the server then starts that connection's terminals
// from (an OPEN's own env goes over Env; its cwd wins over Cwd), as a
// plain sidecar started by the same host would (PROTOCOL.md, "The
// host's environment"). nil and "" when absent.
//
// The fields are declared in the order of their JSON names, so that a
// HELLO goes out with sorted keys like every other body we write (see
// Opened).
type Hello struct {
	Arch     string   `json:"arch,omitempty"`
	Cwd      string   `json:"cwd,omitempty"`
	Env      []string `json:"env,omitempty"`
	Features []string `json:"features"`
	OS       string   `json:"os,omitempty"`
	Protocol int      `json:"protocol"`
	Version  string   `json:"version"`
}

// Has reports whether h announces feature f.
func (h Hello) Has(f string) bool {
	for _, x := range h.Features {
		if x == f {
			return true
		}
	}
	return false
}

// ParseHello decodes a HELLO body. Only protocol is required: a peer that
// sends no version or features is still understood.
func ParseHello(body []byte) (Hello, error) {
	var w struct {
		Version  *string          `json:"version"`
		Protocol *json.RawMessage `json:"protocol"`
		Features []string         `json:"features"`
		OS       string           `json:"os"`
		Arch     string           `json:"arch"`
		Env      []string         `json:"env"`
		Cwd      string           `json:"cwd"`
	}
	if err := unmarshalExact(body, &w); err != nil {
		return Hello{}, fmt.Errorf("HELLO: %w", err)
	}
	if w.Protocol == nil {
		return Hello{}, fmt.Errorf("HELLO: no protocol field")
	}
	p, err := parseUint(*w.Protocol, 1<<31-1)
	if err != nil {
		return Hello{}, fmt.Errorf("HELLO: protocol: %w", err)
	}
	h := Hello{Protocol: int(p), Features: w.Features, OS: w.OS, Arch: w.Arch, Env: w.Env, Cwd: w.Cwd}
	if w.Version != nil {
		h.Version = *w.Version
	}
	return h, nil
}

// SidecarHello is the HELLO a sidecar of this build answers with: version
// is its build, features what it serves (FeatureHello is added), and the
// platform is the one it runs on.
func SidecarHello(version string, features []string) Hello {
	return Hello{
		Version:  version,
		Protocol: ProtocolVersion,
		Features: append([]string{FeatureHello}, features...),
		OS:       runtime.GOOS,
		Arch:     runtime.GOARCH,
	}
}
