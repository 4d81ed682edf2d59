//go:build unix

package ptyhost

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadSpanFillsBothBuffers: one ReadSpan takes what is buffered into
// a and on into b, and the bytes come out in order across every call.
func TestReadSpanFillsBothBuffers(t *testing.T) {
	var want bytes.Buffer
	for i := 0; want.Len() < 100000; i++ {
		fmt.Fprintf(&want, "%07d\n", i)
	}
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "stty raw -echo; i=0; while [ $i -lt 12500 ]; do printf '%07d\\n' $i; i=$((i+1)); done | head -c 100000; read x"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	// Wait until more than a is buffered: the first ReadSpan must then
	// go on into b.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := p.UnreadOutput()
		require.NoError(t, err)
		if n >= 3000 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the child never wrote 3000 bytes")
		time.Sleep(time.Millisecond)
	}
	var got bytes.Buffer
	a, b := make([]byte, 1000), make([]byte, 7000)
	spanned := false
	for got.Len() < want.Len() {
		n, err := p.ReadSpan(a, b)
		require.NoError(t, err)
		if n > len(a) {
			spanned = true
			got.Write(a)
			got.Write(b[:n-len(a)])
		} else {
			got.Write(a[:n])
		}
	}
	require.True(t, spanned, "no read went on from a into b")
	require.Equal(t, want.String(), got.String())
	// An empty a is skipped; both empty read nothing.
	n, err := p.ReadSpan(nil, nil)
	require.Equal(t, 0, n)
	require.NoError(t, err)
	p.Write([]byte("\n"))
	for {
		n, err := p.ReadSpan(nil, b)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Greater(t, n, 0)
	}
	require.NoError(t, p.WaitExit())
	_, err = p.Reap()
	require.NoError(t, err)
}

// TestTryReadNeverWaits: with nothing buffered TryRead returns 0 and no
// error at once (a Read would park); with output buffered it returns it;
// once the child's side is gone it reports EOF.
func TestTryReadNeverWaits(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "stty raw -echo; read x; printf 'out:%s' \"$x\"; read y"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	buf := make([]byte, 256)
	// The child waits for a line and writes nothing: TryRead returns
	// empty-handed instead of waiting for it (the test would hang).
	n, err := p.TryRead(buf)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	_, err = p.Write([]byte("hi\n"))
	require.NoError(t, err)
	var got []byte
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(got, []byte("out:hi")) {
		n, err := p.TryRead(buf)
		require.NoError(t, err)
		got = append(got, buf[:n]...)
		require.True(t, time.Now().Before(deadline), "no output within 10 s; got %q", got)
		if n == 0 {
			time.Sleep(time.Millisecond) // polling is what TryRead is for
		}
	}
	_, err = p.Write([]byte("\n"))
	require.NoError(t, err)
	for {
		_, err := p.TryRead(buf)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.True(t, time.Now().Before(deadline), "no EOF within 10 s")
		time.Sleep(time.Millisecond)
	}
	p.WaitExit()
	p.Reap()
}
