package record

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/proto"
)

// Writer appends records to a fixture. It is safe for concurrent use: the
// sidecar taps frames from its dispatch loop and its writer goroutine at
// the same time, and the order in which they take the lock is the order of
// the file.
//
// The first write error stops the recording for good and is reported once
// through OnError; the session being recorded is never disturbed by it.
type Writer struct {
	// OnError, if set, is called once with the first write error.
	OnError func(error)

	mu     sync.Mutex
	bw     *bufio.Writer
	closer io.Closer // the file, when Create opened it
	start  time.Time
	err    error // sticky: once set nothing more is written
	hdr    [recordHeader]byte
}

// Create creates (or truncates) the fixture file at path and writes its
// header. Like every file ptyplex writes at a user-given path, it must be
// a regular file of ours (see internal/safefile): a link or FIFO planted
// in a shared directory is refused.
func Create(path string) (*Writer, error) {
	f, err := safefile.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.closer = f
	return w, nil
}

// NewWriter writes the fixture header to out and returns a Writer whose
// clock starts now.
func NewWriter(out io.Writer) (*Writer, error) {
	w := &Writer{bw: bufio.NewWriterSize(out, 64<<10), start: time.Now()}
	if _, err := w.bw.WriteString(Magic); err != nil {
		return nil, err
	}
	if err := w.bw.Flush(); err != nil {
		return nil, err
	}
	return w, nil
}

// Tap has the signature of sidecar.Options.Tap: it records frame, a full
// frame encoding, in the direction given. frame is written (into the
// buffer) before Tap returns, so the caller may reuse it.
func (w *Writer) Tap(fromHost bool, frame []byte) {
	k := FromSidecar
	if fromHost {
		k = FromHost
	}
	w.write(k, frame)
}

// Frame records one frame built from its type and body.
func (w *Writer) Frame(k Kind, t proto.Type, body []byte) {
	w.write(k, proto.AppendFrame(nil, t, body))
}

// HostEOF records that the host closed its end of the stream.
func (w *Writer) HostEOF() { w.write(HostEOF, nil) }

// Annotate records a note for the replayer.
func (w *Writer) Annotate(a Annotation) {
	b, _ := json.Marshal(a)
	w.write(Note, b)
}

// Err returns the error that stopped the recording, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) write(k Kind, payload []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.hdr[0] = byte(k)
	binary.LittleEndian.PutUint64(w.hdr[1:], uint64(time.Since(w.start)))
	binary.LittleEndian.PutUint32(w.hdr[9:], uint32(len(payload)))
	if _, err := w.bw.Write(w.hdr[:]); err != nil {
		w.fail(err)
		return
	}
	if _, err := w.bw.Write(payload); err != nil {
		w.fail(err)
		return
	}
	// Control frames and host events are rare and are what a post-mortem
	// needs most, so they reach the file at once; output is left to the
	// buffer so that a flood costs few syscalls.
	if k != FromSidecar || len(payload) <= proto.HeaderSize || proto.Type(payload[4]) != proto.TypeOutput {
		if err := w.bw.Flush(); err != nil {
			w.fail(err)
		}
	}
}

// fail makes err sticky and reports it; w.mu is held.
func (w *Writer) fail(err error) {
	w.err = fmt.Errorf("recording stopped: %w", err)
	if w.OnError != nil {
		w.OnError(w.err)
	}
}

// Close flushes what is buffered and closes the file Create opened. It
// returns the error that stopped the recording, if one did.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.fail(err)
		}
	}
	err := w.err
	if w.closer != nil {
		if cerr := w.closer.Close(); err == nil && cerr != nil {
			err = cerr
		}
		w.closer = nil
	}
	if w.err == nil {
		w.err = fmt.Errorf("recording closed")
	}
	return err
}

// WatchEOF returns a reader that passes r through and records HostEOF the
// first time r reports io.EOF. The sidecar reads its stdin through it so
// that the fixture shows when the host hung up.
func (w *Writer) WatchEOF(r io.Reader) io.Reader { return &eofWatcher{r: r, w: w} }

type eofWatcher struct {
	r    io.Reader
	w    *Writer
	once sync.Once
}

func (e *eofWatcher) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(e.w.HostEOF)
	}
	return n, err
}
