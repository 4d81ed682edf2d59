package proto

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
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

// FeaturePingNow is announced in the HELLO answer of a sidecar that
// answers a PING whose body says "now": true as soon as it reads it, even
// while INPUT waits for a child that reads nothing (PingNow). A sidecar
// without it answers such a PING in its turn, like any other.
const FeaturePingNow = "pingNow"

// HelloFeatures is what a sidecar's HELLO answer lists beyond the
// handshake itself: the per-terminal extensions OPENED lists, and the
// keepalive, which only a host that asked can use.
var HelloFeatures = append(append([]string(nil), Features...), FeatureKeepalive, FeaturePingNow)

// PongFrame is the PONG frame that answers a PING with body ping.
func PongFrame(ping []byte) []byte { return AppendFrame(nil, TypePong, PongBody(ping)) }

// PingNow reports whether a PING's body asks for its PONG as soon as the
// sidecar reads it ({"now": true}), rather than once every frame before
// it was dispatched: a keepalive's PING, which must be answered while a
// paste waits for a child that does not read (its PONG then says only
// that the sidecar reads and writes), unlike a PING that paces a paste.
func PingNow(body []byte) bool {
	if len(body) > MaxPingBody || !bytes.Contains(body, []byte(`"now"`)) {
		return false
	}
	var p struct {
		Now bool `json:"now"`
	}
	return json.Unmarshal(body, &p) == nil && p.Now
}

// PongBody is the body a PONG answers a PING's body with: the same bytes,
// whitespace included, when they are a JSON object of at most MaxPingBody
// bytes, else {} (an empty body, not JSON, not an object, longer). The
// answer never fails: a host that sent nonsense still learns that the
// sidecar is alive. A host may compare the PONG with what it sent byte for
// byte, so the body must not go through an encoder (it would compact it).
// JSON is UTF-8, and json.Valid does not look inside strings: a body
// with a byte outside UTF-8 is answered {} too, so that every body we
// send is JSON a strict decoder reads.
func PongBody(ping []byte) []byte {
	t := bytes.TrimSpace(ping)
	if len(ping) == 0 || len(ping) > MaxPingBody || len(t) == 0 || t[0] != '{' || !utf8.Valid(ping) || !json.Valid(ping) {
		return []byte("{}")
	}
	return append([]byte(nil), ping...)
}
