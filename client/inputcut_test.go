//go:build linux

package client

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
)

// A write larger than one INPUT frame is cut at a UTF-8 character's start
// at or before the frame limit, never inside a character: a console that
// decodes each read alone (Wine's) made two U+FFFD of a character cut in
// two. Bytes that are not UTF-8 are cut at the limit, and no frame is
// empty.
func TestInputCutAtCharacterStarts(t *testing.T) {
	p := newFakePeer(t)
	type result struct {
		term *Terminal
		err  error
	}
	opened := make(chan result, 1)
	go func() {
		term, err := p.c.Open(t.Context(), OpenOptions{ID: "t1", Cmd: "cat", Raw: true})
		opened <- result{term, err}
	}()
	f := p.next(t)
	require.Equal(t, proto.TypeOpen, f.Type)
	_, err := p.toHost.Write(proto.AppendFrame(nil, proto.TypeOpened, proto.Marshal(proto.Opened{TerminalID: "t1", PID: 1})))
	require.NoError(t, err)
	r := <-opened
	require.NoError(t, r.err)
	term := r.term

	// pad returns n ASCII bytes, so that what follows starts at byte n.
	pad := func(n int) string { return strings.Repeat("a", n) }
	const limit = maxInputChunk
	cases := []struct {
		name  string
		data  string
		first int // the first frame's length
	}{
		{"2-byte character across the limit", pad(limit-1) + "é" + pad(10), limit - 1},
		{"3-byte character, one byte before the limit", pad(limit-1) + "€" + pad(10), limit - 1},
		{"3-byte character, two bytes before the limit", pad(limit-2) + "€" + pad(10), limit - 2},
		{"4-byte character, one byte before the limit", pad(limit-1) + "😀" + pad(10), limit - 1},
		{"4-byte character, three bytes before the limit", pad(limit-3) + "😀" + pad(10), limit - 3},
		{"a character ending at the limit", pad(limit-2) + "é" + "€" + pad(10), limit},
		{"a character starting at the limit", pad(limit) + "😀", limit},
		{"not UTF-8: continuation bytes across the limit", pad(limit-4) + strings.Repeat("\x80", 8), limit},
		{"two frames' worth, a character across each limit", pad(limit-1) + "é" + pad(limit-2) + "😀" + pad(5), limit - 1},
	}
	for _, tc := range cases {
		n, err := term.Write([]byte(tc.data))
		require.NoError(t, err, tc.name)
		require.Equal(t, len(tc.data), n, tc.name)
		var got []byte
		var sizes []int
		for len(got) < len(tc.data) {
			f := p.next(t)
			if f.Type == proto.TypeHello {
				// Pacing asks once whether the peer answers PING;
				// this one, silent, gets its input unpaced.
				continue
			}
			require.Equal(t, proto.TypeInput, f.Type, tc.name)
			id, data, err := proto.ParseData(f.Body)
			require.NoError(t, err, tc.name)
			require.Equal(t, "t1", id, tc.name)
			require.NotEmpty(t, data, "%s: an empty INPUT frame", tc.name)
			require.LessOrEqual(t, len(data), limit, tc.name)
			if utf8.ValidString(tc.data) {
				require.True(t, utf8.Valid(data), "%s: frame %d (%d bytes) cuts a character: ends % x", tc.name, len(sizes), len(data), data[max(0, len(data)-4):])
			}
			sizes = append(sizes, len(data))
			got = append(got, data...)
		}
		require.True(t, bytes.Equal(got, []byte(tc.data)), "%s: the frames do not add up to the write", tc.name)
		require.Equal(t, tc.first, sizes[0], "%s: frame sizes %v", tc.name, sizes)
	}
}
