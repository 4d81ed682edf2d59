package proto

import (
	"bytes"
	"encoding/json"
)

// The keepalive (PROTOCOL.md, "PING and PONG"). A host that has to notice
// a dead transport quickly (an ssh connection whose network went away can
// look alive to TCP for minutes) sends PING every few seconds and treats
// a missing PONG as a dead connection. Only sidecars that announce
// FeatureKeepalive in their HELLO answer; a host asks first.
const (
	TypePing Type = 0x11 // host to sidecar: answer with PONG
	TypePong Type = 0x91 // sidecar to host: the PING's body, unchanged
)

// FeatureKeepalive is announced in the HELLO answer of a sidecar that
// answers PING.
const FeatureKeepalive = "keepalive"

// MaxPingBody bounds what a PONG echoes: a PING carries a sequence number
// or a timestamp, not data.
const MaxPingBody = 256

// HelloFeatures is what a sidecar's HELLO answer lists beyond the
// handshake itself: the per-terminal extensions OPENED lists, and the
// keepalive, which only a host that asked can use.
var HelloFeatures = append(append([]string(nil), Features...), FeatureKeepalive)

// PongBody is the body a PONG answers a PING's body with: the same JSON
// object, or {} when the PING's body is empty, not a JSON object, or
// longer than MaxPingBody. The answer never fails: a host that sent
// nonsense still learns that the sidecar is alive.
func PongBody(ping []byte) []byte {
	t := bytes.TrimSpace(ping)
	if len(t) == 0 || len(t) > MaxPingBody || t[0] != '{' || !json.Valid(t) {
		return []byte("{}")
	}
	return append([]byte(nil), t...)
}
