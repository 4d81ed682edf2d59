package sidecar

import (
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
)

// helloReply answers the host's HELLO with our own, whatever it said:
// even a host with another protocol version or a malformed body learns
// which sidecar it reached, which is what it needs to say what to
// install. The host's side is only logged (dispatch); nothing here
// depends on it.
func (s *Sidecar) helloReply() {
	s.out.queueControl(nil, proto.TypeHelloReply, proto.SidecarHello(version.Version, proto.HelloFeatures))
}
