package proto

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CheckData sees a data frame's id and payload length once its header and
// id are in, and its error ends ReadFrame before any of the payload was
// read: here the payload never comes at all.
func TestReaderCheckDataAtHeader(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		pr, pw := io.Pipe()
		frame := AppendDataFrame(nil, TypeOutput, "t1", make([]byte, MaxData))
		go pw.Write(frame[:DataHeaderSize(2)]) // the header and the id, then nothing
		r := NewReader(pr)
		if reuse {
			r.ReuseBuffer()
		}
		refused := errors.New("too much")
		var gotID string
		var gotN int
		r.CheckData(func(typ Type, id string, n int) error {
			assert.Equal(t, TypeOutput, typ)
			gotID, gotN = id, n
			return refused
		})
		done := make(chan error, 1)
		go func() { _, err := r.ReadFrame(); done <- err }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, refused)
		case <-time.After(10 * time.Second):
			t.Fatal("ReadFrame waited for the payload")
		}
		assert.Equal(t, "t1", gotID)
		assert.Equal(t, MaxData, gotN)
		pw.Close()
	}
}

// Frames the check accepts, control frames and data frames with a
// malformed id (left to ParseData) come out as before.
func TestReaderCheckDataPasses(t *testing.T) {
	var stream []byte
	stream = AppendDataFrame(stream, TypeOutput, "a", []byte("hello"))
	stream = AppendDataFrame(stream, TypeInput, "b", nil)
	stream = AppendFrame(stream, TypeExit, []byte(`{"terminalId":"a"}`))
	stream = AppendFrame(stream, TypeOutput, []byte{0, 0, 'x'}) // empty id
	stream = AppendFrame(stream, TypeOutput, []byte{9, 0, 'x'}) // id past the body
	stream = AppendFrame(stream, TypeOutput, []byte{1})         // no id length
	type call struct {
		typ Type
		id  string
		n   int
	}
	var calls []call
	r := NewReader(&oneByte{stream})
	r.CheckData(func(typ Type, id string, n int) error {
		calls = append(calls, call{typ, id, n})
		return nil
	})
	var types []Type
	for {
		f, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		types = append(types, f.Type)
	}
	assert.Equal(t, []Type{TypeOutput, TypeInput, TypeExit, TypeOutput, TypeOutput, TypeOutput}, types)
	assert.Equal(t, []call{{TypeOutput, "a", 5}, {TypeInput, "b", 0}}, calls)
}

// A stream that ends inside the id is corrupt, as inside any body.
func TestReaderCheckDataShort(t *testing.T) {
	frame := AppendDataFrame(nil, TypeOutput, "abc", []byte("x"))
	r := NewReader(&oneByte{frame[:HeaderSize+3]})
	r.CheckData(func(Type, string, int) error { t.Fatal("checked a frame whose id never came"); return nil })
	_, err := r.ReadFrame()
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "stream ended inside an OUTPUT frame")
}

// oneByte reads its bytes one at a time, as a trickling peer sends them.
type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = o.b[0]
	o.b = o.b[1:]
	return 1, nil
}
