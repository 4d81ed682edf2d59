package proto

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrCorrupt wraps every decoding failure that makes the stream unusable.
var ErrCorrupt = errors.New("corrupt frame stream")

// Reader decodes frames from a byte stream.
type Reader struct {
	r     *bufio.Reader
	hdr   [HeaderSize]byte
	reuse bool   // hand out buf instead of a fresh body per frame
	buf   []byte // the reused body buffer
	check func(t Type, id string, n int) error
}

// NewReader returns a Reader with a read buffer sized for typical frames.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Buffered is how many bytes were read from the stream and not yet
// returned as frames.
func (r *Reader) Buffered() int { return r.r.Buffered() }

// ReuseBuffer makes ReadFrame return bodies that point into the Reader's
// own buffers, valid only until the next call. Hosts that consume each frame
// at once (copy the output away, decode the JSON) save an allocation per
// frame this way, and for frames that fit the read buffer a copy too.
func (r *Reader) ReuseBuffer() { r.reuse = true }

// CheckData makes ReadFrame call fn for every data frame (INPUT or OUTPUT)
// as soon as its header and terminal id have arrived, with the length n of
// its payload, before the payload is read: a host checks the frame against
// the credit it granted and refuses one too large before it has buffered
// any of it (up to MaxFrame bytes, which a hostile peer may send one at a
// time). An error from fn is what ReadFrame returns; the stream is not
// usable after it. A frame whose id is malformed is not checked: it is
// returned whole, for ParseData to report.
func (r *Reader) CheckData(fn func(t Type, id string, n int) error) { r.check = fn }

// ReadFrame returns the next frame. Unless ReuseBuffer was called, each
// frame's body is freshly allocated, so callers may keep it. At a clean end of stream (EOF exactly between
// frames) it returns io.EOF; a zero or oversized length or a stream that
// ends inside a frame returns an error wrapping ErrCorrupt.
func (r *Reader) ReadFrame() (Frame, error) {
	// The length is checked as soon as its four bytes are in, before the
	// type byte is waited for: a zero or oversized length is reported
	// (and the stream given up) at once, not when a fifth byte comes.
	n, err := io.ReadFull(r.r, r.hdr[:4])
	if err == nil {
		total := binary.LittleEndian.Uint32(r.hdr[:4])
		if total == 0 {
			return Frame{}, fmt.Errorf("%w: zero frame length", ErrCorrupt)
		}
		if total > MaxFrame {
			return Frame{}, fmt.Errorf("%w: frame length %d exceeds the %d byte limit", ErrCorrupt, total, MaxFrame)
		}
		var m int
		m, err = io.ReadFull(r.r, r.hdr[4:])
		n += m
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	if err != nil {
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return Frame{}, fmt.Errorf("%w: stream ended inside a frame header (%d of %d bytes)", ErrCorrupt, n, HeaderSize)
		}
		return Frame{}, err
	}
	total := binary.LittleEndian.Uint32(r.hdr[:4])
	f := Frame{Type: Type(r.hdr[4])}
	if r.check != nil && (f.Type == TypeOutput || f.Type == TypeInput) {
		if err := r.checkData(f.Type, int(total-1)); err != nil {
			return Frame{}, err
		}
	}
	if r.reuse && int(total-1) <= r.r.Size() {
		// The body is in (or fits) the read buffer: hand it out in place,
		// saving a copy of every byte. Discard only moves the read
		// position; the bytes stay put until the next read refills.
		body, err := r.r.Peek(int(total - 1))
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return Frame{}, fmt.Errorf("%w: stream ended inside %s frame (%d of %d body bytes)", ErrCorrupt, f.Type.withArticle(), len(body), total-1)
			}
			return Frame{}, err
		}
		r.r.Discard(len(body))
		f.Body = body
		return f, nil
	}
	if r.reuse {
		if cap(r.buf) < int(total-1) {
			r.buf = make([]byte, total-1)
		}
		f.Body = r.buf[:total-1]
	} else {
		f.Body = make([]byte, total-1)
	}
	if n, err := io.ReadFull(r.r, f.Body); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return Frame{}, fmt.Errorf("%w: stream ended inside %s frame (%d of %d body bytes)", ErrCorrupt, f.Type.withArticle(), n, len(f.Body))
		}
		return Frame{}, err
	}
	return f, nil
}

// checkData peeks at the terminal id of a data frame whose body is size
// bytes and hands it to the check. Only bytes of this frame are waited for.
func (r *Reader) checkData(t Type, size int) error {
	if size < 2 {
		return nil
	}
	b, err := r.r.Peek(2)
	if err != nil {
		return r.short(err, t, len(b), size)
	}
	n := int(binary.LittleEndian.Uint16(b))
	if n == 0 || n > MaxID || 2+n > size {
		return nil
	}
	b, err = r.r.Peek(2 + n)
	if err != nil {
		return r.short(err, t, len(b), size)
	}
	id := b[2:]
	if !utf8.Valid(id) {
		return nil
	}
	return r.check(t, string(id), size-2-n)
}

// short reports a stream that ended (or failed) inside a frame body.
func (r *Reader) short(err error, t Type, have, size int) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: stream ended inside %s frame (%d of %d body bytes)", ErrCorrupt, t.withArticle(), have, size)
	}
	return err
}
