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
// What reached the file then is cut back to its last whole record when the
// output can be truncated (a file): a full disk leaves a fixture that reads
// to its end, not one that ends inside a record as a killed sidecar's does.
type Writer struct {
	// OnError, if set, is called once with the first write error.
	OnError func(error)

	mu     sync.Mutex
	bw     *bufio.Writer
	out    *countingWriter // under bw: what reached the output
	closer io.Closer       // the file, when Create opened it
	start  time.Time
	err    error // sticky: once set nothing more is written
	hdr    [recordHeader]byte

	// Where the records end: end is the offset past the last record
	// handed to bw, pending the ends of those bw may still hold, whole
	// the end of the last record wholly in the output and kept how many
	// records that is.
	end     int64
	pending []int64
	whole   int64
	kept    int
}

// countingWriter counts what its writer took.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// truncater is what the output needs for a failed write to be cut back
// to the last whole record (*os.File has it).
type truncater interface{ Truncate(size int64) error }

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
	cw := &countingWriter{w: out}
	w := &Writer{bw: bufio.NewWriterSize(cw, 64<<10), out: cw, start: time.Now()}
	if _, err := w.bw.WriteString(Magic); err != nil {
		return nil, err
	}
	if err := w.bw.Flush(); err != nil {
		return nil, err
	}
	w.end, w.whole = int64(len(Magic)), int64(len(Magic))
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
	w.end += int64(recordHeader + len(payload))
	w.pending = append(w.pending, w.end)
	// Control frames and host events are rare and are what a post-mortem
	// needs most, so they reach the file at once; output is left to the
	// buffer so that a flood costs few syscalls.
	if k != FromSidecar || len(payload) <= proto.HeaderSize || proto.Type(payload[4]) != proto.TypeOutput {
		if err := w.bw.Flush(); err != nil {
			w.fail(err)
			return
		}
	}
	w.settle()
}

// settle counts the records that reached the output whole; w.mu is held.
func (w *Writer) settle() {
	i := 0
	for i < len(w.pending) && w.pending[i] <= w.out.n {
		i++
	}
	if i > 0 {
		w.whole = w.pending[i-1]
		w.kept += i
		w.pending = append(w.pending[:0], w.pending[i:]...)
	}
}

// fail makes err sticky, cuts what reached the output back to its last
// whole record and reports both; w.mu is held.
func (w *Writer) fail(err error) {
	w.settle()
	what := fmt.Sprintf("the recording holds %d whole records", w.kept)
	if part := w.out.n - w.whole; part > 0 {
		if tr, ok := w.out.w.(truncater); !ok {
			what += fmt.Sprintf(", then %d bytes of the next one", part)
		} else if terr := tr.Truncate(w.whole); terr != nil {
			what += fmt.Sprintf(", then %d bytes of the next one: cutting those off failed too: %v", part, terr)
		} else {
			what += fmt.Sprintf(" (the %d bytes of the next one that were written are cut off)", part)
		}
	}
	w.err = fmt.Errorf("recording stopped: %w; %s", err, what)
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
