package client

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWindowGrantsInBatches(t *testing.T) {
	w := newWindow(10)
	w.push([]byte("0123456789"))
	p := make([]byte, 3)

	n, grant, err := w.read(p)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Zero(t, grant, "3 bytes owed is below half the window")

	n, grant, _ = w.read(p[:2])
	assert.Equal(t, 2, n)
	assert.Equal(t, 5, grant, "half the window owed: grant it all at once")

	w.finish(io.EOF)
	n, grant, err = w.read(make([]byte, 100))
	require.NoError(t, err, "buffered output outlives the end")
	assert.Equal(t, 5, n)
	assert.Zero(t, grant, "no grants to a finished terminal")
	_, _, err = w.read(p)
	assert.Equal(t, io.EOF, err)
}

func TestWindowRawNeverGrants(t *testing.T) {
	w := newWindow(0)
	w.push(make([]byte, 1<<20))
	n, grant, err := w.read(make([]byte, 1<<20))
	require.NoError(t, err)
	assert.Equal(t, 1<<20, n)
	assert.Zero(t, grant)
}

func TestWindowReadSpansChunks(t *testing.T) {
	w := newWindow(100)
	w.push([]byte("ab"))
	w.push([]byte("cd"))
	w.push([]byte("ef"))
	p := make([]byte, 5)
	n, _, err := w.read(p)
	require.NoError(t, err)
	assert.Equal(t, "abcde", string(p[:n]))
	buffered, peak := w.stats()
	assert.Equal(t, 1, buffered)
	assert.Equal(t, 6, peak)
}

func TestWindowRefusesOutputBeyondCredit(t *testing.T) {
	w := newWindow(10)
	require.NoError(t, w.push([]byte("0123456789")), "exactly the window is allowed")
	err := w.push([]byte("x"))
	require.Error(t, err, "one byte past the credit granted")
	assert.Contains(t, err.Error(), "only 0 of the 10 byte credit window left")
	buffered, _ := w.stats()
	assert.Equal(t, 10, buffered, "refused bytes are not buffered")

	// Reading half the window grants it back: exactly that much more fits.
	n, grant, err := w.read(make([]byte, 5))
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, 5, grant)
	require.NoError(t, w.push([]byte("abcde")))
	require.Error(t, w.push([]byte("f")))

	// After CLOSE the sidecar drains unthrottled.
	w.lift()
	require.NoError(t, w.push(make([]byte, 100)))
}

// A resume attaches at what was received, read or not, with the credit
// the window has room for; a grant from before it is not sent after it.
func TestWindowResume(t *testing.T) {
	w := newWindow(10)
	require.NoError(t, w.push([]byte("0123456")))
	n, grant, e, err := w.readEpoch(make([]byte, 5))
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, 5, grant)
	off, credit := w.resetCredit()
	assert.Equal(t, uint64(7), off, "buffered bytes count as received")
	require.NotNil(t, credit)
	assert.Equal(t, uint64(8), *credit, "10 minus the 2 still buffered")
	assert.False(t, w.current(e), "the grant from before the resume is stale")
	w.ungrant(5, e)
	assert.Error(t, w.push(make([]byte, 9)), "a stale grant given back must not widen the window")
	require.NoError(t, w.push([]byte("78")))

	// The repaint of lost bytes reads like output and moves the offset
	// past the gap once read.
	w.resync([]byte("<repaint>"), 100)
	p := make([]byte, 64)
	n, _, _ = w.read(p)
	assert.Equal(t, "5678<repaint>", string(p[:n]))
	pos, recv := w.offsets()
	assert.Equal(t, uint64(100), pos)
	assert.Equal(t, uint64(100), recv)
	require.NoError(t, w.push([]byte("x")))
	_, recv = w.offsets()
	assert.Equal(t, uint64(101), recv)

	raw := newWindow(0)
	_, credit = raw.resetCredit()
	assert.Nil(t, credit, "a raw terminal attaches unthrottled")
}

// A Read with an empty buffer returns at once, as io.Reader's convention
// and an os.File's or net.Conn's have it; io.EOF once everything was read
// after the end. It waited for the terminal's next output.
func TestWindowEmptyReadDoesNotWait(t *testing.T) {
	w := newWindow(10)
	done := make(chan error, 1)
	go func() {
		_, _, err := w.read(nil)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(waitBound):
		w.push([]byte("x")) // let the goroutine go
		t.Fatal("an empty read waited for output")
	}
	w.push([]byte("ab"))
	n, _, err := w.read(nil)
	require.NoError(t, err)
	assert.Zero(t, n)
	w.finish(io.EOF)
	_, _, err = w.read([]byte{})
	require.NoError(t, err, "output still buffered")
	n, _, _ = w.read(make([]byte, 8))
	assert.Equal(t, 2, n)
	_, _, err = w.read(nil)
	assert.Equal(t, io.EOF, err)
}
