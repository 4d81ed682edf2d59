package sidecar_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
)

// HELLO is answered with the sidecar's own, even when the host's is
// malformed or of another protocol (the host needs the answer to say what
// to install), and changes nothing for terminals.
func TestHelloAnswered(t *testing.T) {
	h := start(t)
	h.Send(proto.TypeHello, []byte(`{"version":"v9","protocol":7,"features":["hello","teleport"]}`))
	h.Send(proto.TypeHello, []byte(`not json`))
	sh(h, "t1", "echo after-hello")
	h.WaitOutput("t1", "after-hello")
	exitOf(t, h, "t1")
	var hellos []proto.Hello
	for _, f := range h.Now().Frames {
		if f.Type == proto.TypeHelloReply {
			hl, err := proto.ParseHello(f.Body)
			require.NoError(t, err, "%s", f.Body)
			hellos = append(hellos, hl)
		}
	}
	require.Len(t, hellos, 2, "one answer per HELLO")
	for _, hl := range hellos {
		assert.Equal(t, proto.ProtocolVersion, hl.Protocol)
		assert.True(t, hl.Has(proto.FeatureHello))
		assert.True(t, hl.Has(proto.FeatureSignal))
		assert.NotEmpty(t, hl.OS)
		assert.NotEmpty(t, hl.Arch)
		assert.NotEmpty(t, hl.Version)
	}
	h.WaitStderr(regexp.MustCompile(`HELLO: .*answering with our own`))
}
