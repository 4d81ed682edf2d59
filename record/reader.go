package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// ErrFormat wraps every reason a fixture cannot be read.
var ErrFormat = errors.New("bad fixture")

// ErrTruncated wraps (with ErrFormat) a file that ends inside a record:
// the records before it are whole, and ReadAll returns them with it.
var ErrTruncated = errors.New("the file ends inside a record")

// truncated is the error for a file that ends inside record n.
func truncated(n int, what string) error {
	return fmt.Errorf("%w: record %d: truncated %s: %w (a recording cut short; the %d records before it are whole)", ErrFormat, n, what, ErrTruncated, n)
}

// Reader reads records from a fixture.
type Reader struct {
	r   *bufio.Reader
	n   int // records read, for error messages
	hdr [recordHeader]byte
}

// NewReader checks the header of a fixture and returns a Reader positioned
// at its first record.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != Magic {
		return nil, fmt.Errorf("%w: missing %q header", ErrFormat, Magic[:len(Magic)-1])
	}
	return &Reader{r: br}, nil
}

// Next returns the next record, or io.EOF after the last one. A file that
// ends inside a record (a recording cut short) is reported as an error.
func (r *Reader) Next() (Record, error) {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		if err == io.EOF {
			return Record{}, io.EOF
		}
		return Record{}, truncated(r.n, "header")
	}
	rec := Record{
		Kind: Kind(r.hdr[0]),
		At:   time.Duration(binary.LittleEndian.Uint64(r.hdr[1:])),
	}
	size := binary.LittleEndian.Uint32(r.hdr[9:])
	if size > maxPayload {
		return Record{}, fmt.Errorf("%w: record %d: payload of %d bytes", ErrFormat, r.n, size)
	}
	rec.Raw = make([]byte, size)
	if _, err := io.ReadFull(r.r, rec.Raw); err != nil {
		return Record{}, truncated(r.n, "payload")
	}
	if rec.Kind == FromHost || rec.Kind == FromSidecar {
		f, err := proto.NewReader(bytes.NewReader(rec.Raw)).ReadFrame()
		if err != nil {
			return Record{}, fmt.Errorf("%w: record %d: %v", ErrFormat, r.n, err)
		}
		if proto.HeaderSize+len(f.Body) != len(rec.Raw) {
			return Record{}, fmt.Errorf("%w: record %d: payload holds more than one frame", ErrFormat, r.n)
		}
		rec.Frame = f
	}
	r.n++
	return rec, nil
}

// ReadAll reads every record of a fixture. On an error it returns the
// records read before it too.
func ReadAll(r io.Reader) ([]Record, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	var recs []Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
}

// ReadFile reads every record of the fixture at path. On an error it
// returns the records read before it too: for a file that ends inside a
// record (errors.Is(err, ErrTruncated)) those are all it holds whole.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := ReadAll(f)
	if err != nil {
		return recs, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// WriteAll writes a complete fixture holding recs (with their timestamps)
// to out; tools use it to add notes to a recording.
func WriteAll(out io.Writer, recs []Record) error {
	bw := bufio.NewWriter(out)
	bw.WriteString(Magic)
	var hdr [recordHeader]byte
	for _, rec := range recs {
		hdr[0] = byte(rec.Kind)
		binary.LittleEndian.PutUint64(hdr[1:], uint64(rec.At))
		binary.LittleEndian.PutUint32(hdr[9:], uint32(len(rec.Raw)))
		bw.Write(hdr[:])
		bw.Write(rec.Raw)
	}
	return bw.Flush()
}
