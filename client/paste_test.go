//go:build linux

package client

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
)

// On the wire: a credited terminal's paste goes out in pieces of
// pasteStep bytes, each followed by a PING, and the next piece only after
// that PING's PONG; a CREDIT due meanwhile goes out at once. Only a peer
// whose HELLO announced the keepalive is paced (an older one may not
// answer PING); a client that did not begin with HELLO asks when it first
// needs to know.
func TestPastePiecesWaitForThePong(t *testing.T) {
	p := newFakePeer(t)
	hello := make(chan error, 1)
	go func() {
		_, err := p.c.Hello(t.Context())
		hello <- err
	}()
	require.Equal(t, proto.TypeHello, p.next(t).Type)
	_, err := p.toHost.Write(proto.AppendFrame(nil, proto.TypeHelloReply,
		proto.Marshal(proto.SidecarHello("test", proto.HelloFeatures))))
	require.NoError(t, err)
	require.NoError(t, <-hello)

	const window = 1024
	opened := make(chan *Terminal, 1)
	go func() {
		term, err := p.c.Open(t.Context(), OpenOptions{ID: "t1", Cmd: "cat", Window: window})
		assert.NoError(t, err)
		opened <- term
	}()
	require.Equal(t, proto.TypeOpen, p.next(t).Type)
	_, err = p.toHost.Write(proto.AppendFrame(nil, proto.TypeOpened, proto.Marshal(proto.Opened{TerminalID: "t1", PID: 1})))
	require.NoError(t, err)
	term := <-opened
	require.NotNil(t, term)

	// Its tail is larger than smallInput: small writes go out while
	// a PONG is due (smallSlack), a paste's pieces do not.
	paste := bytes.Repeat([]byte("0123456789abcdef"), (2*pasteStep+smallInput+16)/16)
	wrote := make(chan error, 1)
	go func() {
		_, err := term.Write(paste)
		wrote <- err
	}()
	var got []byte
	// input reads INPUT frames until want bytes of the paste came.
	input := func(want int) {
		t.Helper()
		for len(got) < want {
			f := p.next(t)
			require.Equal(t, proto.TypeInput, f.Type, "after %d bytes of the paste", len(got))
			_, data, err := proto.ParseData(f.Body)
			require.NoError(t, err)
			got = append(got, data...)
		}
		require.Len(t, got, want, "a piece is at most pasteStep bytes")
	}
	// pong answers the PING that must come next.
	pong := func() {
		t.Helper()
		f := p.next(t)
		require.Equal(t, proto.TypePing, f.Type, "after %d bytes of the paste", len(got))
		_, err := p.toHost.Write(proto.AppendFrame(nil, proto.TypePong, f.Body))
		require.NoError(t, err)
	}

	input(pasteStep)
	f := p.next(t)
	require.Equal(t, proto.TypePing, f.Type, "a PING follows the first piece")
	// While the paste waits for the PONG, output is read: its CREDIT
	// is the next frame, not more of the paste.
	_, err = p.toHost.Write(proto.AppendDataFrame(nil, proto.TypeOutput, "t1", bytes.Repeat([]byte("o"), window)))
	require.NoError(t, err)
	_, err = io.ReadFull(term, make([]byte, window))
	require.NoError(t, err)
	credit := p.next(t)
	require.Equal(t, proto.TypeCredit, credit.Type, "the grant goes out while the paste waits")
	_, err = p.toHost.Write(proto.AppendFrame(nil, proto.TypePong, f.Body))
	require.NoError(t, err)

	input(2 * pasteStep)
	pong()
	input(len(paste))
	require.NoError(t, <-wrote)
	require.True(t, bytes.Equal(paste, got), "the pieces add up to the paste, in order")

	// A client started without the handshake asks for it when a paste
	// first fills a piece. A peer that answers with the keepalive is
	// paced from then on.
	q := newFakePeer(t)
	term = openFake(t, q, "t2", window)
	go func() {
		_, err := term.Write(paste)
		wrote <- err
	}()
	got = nil
	p = q
	input(pasteStep)
	require.Equal(t, proto.TypeHello, q.next(t).Type, "asked once a piece is full")
	_, err = q.toHost.Write(proto.AppendFrame(nil, proto.TypeHelloReply,
		proto.Marshal(proto.SidecarHello("test", proto.HelloFeatures))))
	require.NoError(t, err)
	pong()
	input(2 * pasteStep)
	pong()
	input(len(paste))
	require.NoError(t, <-wrote)

	// One that does not answer (older than HELLO) is asked once, and
	// its pastes go out as before.
	o := newFakePeer(t)
	term = openFake(t, o, "t3", window)
	for i := range 2 {
		go func() {
			_, err := term.Write(paste)
			wrote <- err
		}()
		got = nil
		p = o
		input(pasteStep)
		if i == 0 {
			require.Equal(t, proto.TypeHello, o.next(t).Type, "asked once a piece is full")
		}
		input(len(paste))
		require.NoError(t, <-wrote)
	}
}

// openFake opens a credited terminal on a fake peer, which answers OPENED.
func openFake(t *testing.T, p *fakePeer, id string, window int) *Terminal {
	t.Helper()
	opened := make(chan *Terminal, 1)
	go func() {
		term, err := p.c.Open(t.Context(), OpenOptions{ID: id, Cmd: "cat", Window: window})
		assert.NoError(t, err)
		opened <- term
	}()
	require.Equal(t, proto.TypeOpen, p.next(t).Type)
	_, err := p.toHost.Write(proto.AppendFrame(nil, proto.TypeOpened, proto.Marshal(proto.Opened{TerminalID: id, PID: 1})))
	require.NoError(t, err)
	term := <-opened
	require.NotNil(t, term)
	return term
}
