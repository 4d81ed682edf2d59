//go:build unix

package sidecar_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
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
			// Keys sorted, as in every other body the sidecar writes.
			keys := topKeys(t, f.Body)
			assert.True(t, slices.IsSorted(keys), "HELLO keys %v not sorted: %s", keys, f.Body)
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
	waitLog(t, h, regexp.MustCompile(`HELLO: .*answering with our own`))
}

// topKeys lists the keys of the JSON object body in the order sent.
func topKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "%s", body)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// PING is answered with PONG carrying the PING's body, and the HELLO
// answer announces the keepalive; a body that is not a small JSON object
// (or not UTF-8) is still answered (with {}), so that a host never mistakes a sidecar
// that is alive for a dead one.
func TestPingAnswered(t *testing.T) {
	h := start(t)
	h.Send(proto.TypeHello, []byte(`{"version":"v","protocol":1,"features":["hello"]}`))
	h.Send(proto.TypePing, []byte(`{"seq":7}`))
	h.Send(proto.TypePing, []byte(` { "seq" : 8,  "at":"<\u00e9>" }`+"\n"))
	h.Send(proto.TypePing, []byte(`not json`))
	h.Send(proto.TypePing, nil)
	h.Send(proto.TypePing, []byte(`{"pad":"`+strings.Repeat("x", proto.MaxPingBody)+`"}`))
	// Not UTF-8, so not JSON, though encoding/json's Valid takes it.
	h.Send(proto.TypePing, []byte("{\"seq\":\"\xff\"}"))
	s := h.MustUntil("six PONGs", func(s hosttest.Snapshot) bool {
		n := 0
		for _, f := range s.Frames {
			if f.Type == proto.TypePong {
				n++
			}
		}
		return n == 6
	})
	var pongs []string
	var hello proto.Hello
	for _, f := range s.Frames {
		switch f.Type {
		case proto.TypePong:
			pongs = append(pongs, string(f.Body))
		case proto.TypeHelloReply:
			var err error
			hello, err = proto.ParseHello(f.Body)
			require.NoError(t, err)
		}
	}
	assert.Equal(t, []string{`{"seq":7}`, ` { "seq" : 8,  "at":"<\u00e9>" }` + "\n", `{}`, `{}`, `{}`, `{}`}, pongs, "each PONG's body is its PING's, byte for byte")
	assert.True(t, hello.Has(proto.FeatureKeepalive), "%v", hello.Features)
	sh(h, "t1", "echo after-ping")
	h.WaitOutput("t1", "after-ping")
}

// Frames of unknown types are dropped, as the seed protocol asks, by the
// plain sidecar and the persistent server alike: no answer, no ERROR, and
// the PING behind them is the only frame answered.
func TestUnknownFramesIgnored(t *testing.T) {
	h := start(t)
	h.Send(proto.Type(0x3f), []byte(`{"terminalId":"a"}`))
	h.Send(proto.Type(0x7e), nil)
	h.Send(proto.Type(0x5a), []byte(`not json`))
	h.Send(proto.TypePing, []byte(`{"seq":1}`))
	s := h.MustUntil("a PONG", func(s hosttest.Snapshot) bool { return len(s.Frames) > 0 })
	require.Len(t, s.Frames, 1, "only the PING is answered")
	require.Equal(t, proto.TypePong, s.Frames[0].Type)
	// And the stream goes on: a terminal opened after them works.
	sh(h, "u1", "echo after-unknown")
	h.WaitOutput("u1", "after-unknown")
	exitOf(t, h, "u1")
}

// The persistent server's frames (well formed or not) are dropped by the
// plain sidecar: it does not serve them, and answering one would read as
// a server's answer. The PING behind them is the only frame answered.
func TestPersistFramesIgnored(t *testing.T) {
	plainOnly(t, "not a bug but what the product is: the persistent server serves LIST, ATTACH, DETACH and UPGRADE, and answers these with LISTED and ERRORs")
	h := start(t)
	h.Send(proto.TypeList, nil)
	h.Send(proto.TypeAttach, []byte(`{"terminalId":"a","offset":"x"}`))
	h.Send(proto.TypeDetach, []byte(`{"terminalId":"a",`))
	h.Send(proto.TypeUpgrade, []byte(`{"path":"relative"}`))
	h.Send(proto.TypePing, []byte(`{"seq":1}`))
	s := h.MustUntil("a PONG", func(s hosttest.Snapshot) bool { return len(s.Frames) > 0 })
	require.Len(t, s.Frames, 1, "only the PING is answered")
	require.Equal(t, proto.TypePong, s.Frames[0].Type)
}
