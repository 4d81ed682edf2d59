package replay

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ptyplex/ptyplex/internal/cescape"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
)

// Dump prints the fixture at path one record per line (`ptyplex replay
// --dump`). Frame bodies and notes come from the file as they are, and a
// fixture may hold anything: they are printed escaped, so that no escape
// sequence in them (a clipboard write, a title) reaches the terminal that
// shows the dump.
//
// A file that ends inside a record (a recording cut short: the sidecar
// was killed) has its whole records printed all the same, the last line
// saying where it ends, and the error is returned after them: a dump is
// for finding out what happened, and what was recorded before the cut is
// most of it. Any other damage is returned before anything is printed.
func Dump(w io.Writer, path string) error {
	recs, err := record.ReadFile(path)
	if err != nil && !errors.Is(err, record.ErrTruncated) {
		return err
	}
	if err != nil {
		fmt.Fprintf(w, "%s: %d whole records, then a record cut short\n", cescape.Escape(path), len(recs))
	} else {
		fmt.Fprintf(w, "%s: %d records\n", cescape.Escape(path), len(recs))
	}
	for _, r := range recs {
		fmt.Fprintf(w, "%12s  %-7s  ", r.At.Round(time.Microsecond), r.Kind)
		switch r.Kind {
		case record.FromHost, record.FromSidecar:
			f := r.Frame
			if f.Type == proto.TypeInput || f.Type == proto.TypeOutput {
				id, data, err := proto.ParseData(f.Body)
				if err == nil {
					show := data
					if len(show) > 60 {
						show = show[:60]
					}
					fmt.Fprintf(w, "%-6s %s %d bytes %q\n", f.Type, cescape.Escape(id), len(data), show)
					continue
				}
			}
			fmt.Fprintf(w, "%-6s %s\n", f.Type, cescape.EscapeControls(string(f.Body)))
		default:
			fmt.Fprintf(w, "%s\n", cescape.EscapeControls(string(r.Raw)))
		}
	}
	if err != nil {
		fmt.Fprintf(w, "%12s  (the file ends inside record %d)\n", "", len(recs))
	}
	return err
}
