package sidecar

import (
	"encoding/json"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
)

// hello answers the host's HELLO with our own, whatever it said: even a
// host with another protocol version or a malformed body learns which
// sidecar it reached, which is what it needs to say what to install. The
// host's side is only logged; nothing here depends on it.
func (s *Sidecar) hello(body []byte) {
	if h, err := proto.ParseHello(body); err != nil {
		s.logf("%v (answering with our own)", err)
	} else {
		s.logf("host %q speaks protocol %d, features %v", h.Version, h.Protocol, h.Features)
	}
	s.out.queueControl(nil, proto.TypeHelloReply, proto.SidecarHello(version.Version, proto.HelloFeatures))
}

// ping answers a PING with its body (proto.PongBody). The answer goes
// through the writer like any control frame, so a PONG also tells the
// host that the output stream is moving.
func (s *Sidecar) ping(body []byte) {
	s.out.queueControl(nil, proto.TypePong, json.RawMessage(proto.PongBody(body)))
}
