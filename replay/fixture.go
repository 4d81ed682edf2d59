package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
)

// Fixture is a recording prepared for replay: the host's side as steps to
// perform, the sidecar's side as expectations per terminal.
type Fixture struct {
	Name  string
	Steps []Step
	// Expect holds, per terminal id, the control frames and output the
	// recording shows, in order of first appearance (Order).
	Expect map[string]*Expected
	Order  []string
}

// Step is one host action: send Frame, or close stdin when EOF is set.
type Step struct {
	Frame []byte
	EOF   bool
	// Before is what the recording shows the sidecar had produced, per
	// terminal, when the host acted: the replay waits for as much.
	Before map[string]Progress
}

// Progress counts a terminal's frames up to some point of the recording.
type Progress struct {
	Controls int
	Bytes    int
}

// Expected is what one terminal received in the recording.
type Expected struct {
	Controls []Control
	Output   []byte
	Mode     string // record.OutputExact, OutputLength or OutputIgnore
}

// Load reads and prepares the fixture at path.
func Load(path string) (*Fixture, error) {
	recs, err := record.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Prepare(filepath.Base(path), recs)
}

// Prepare turns records into a Fixture.
func Prepare(name string, recs []record.Record) (*Fixture, error) {
	f := &Fixture{Name: name, Expect: map[string]*Expected{}}
	exp := func(id string) *Expected {
		e := f.Expect[id]
		if e == nil {
			e = &Expected{Mode: record.OutputExact}
			f.Expect[id] = e
			f.Order = append(f.Order, id)
		}
		return e
	}
	progress := func() map[string]Progress {
		p := make(map[string]Progress, len(f.Expect))
		for id, e := range f.Expect {
			p[id] = Progress{Controls: len(e.Controls), Bytes: len(e.Output)}
		}
		return p
	}
	sawEOF := false
	for i, rec := range recs {
		switch rec.Kind {
		case record.FromHost:
			if sawEOF {
				return nil, fmt.Errorf("%s: record %d: host frame after the host closed its stream", name, i)
			}
			f.Steps = append(f.Steps, Step{Frame: rec.Raw, Before: progress()})
		case record.HostEOF:
			if !sawEOF {
				sawEOF = true
				f.Steps = append(f.Steps, Step{EOF: true, Before: progress()})
			}
		case record.FromSidecar:
			fr := rec.Frame
			if fr.Type == proto.TypeOutput {
				id, data, err := proto.ParseData(fr.Body)
				if err != nil {
					return nil, fmt.Errorf("%s: record %d: %v", name, i, err)
				}
				e := exp(id)
				e.Output = append(e.Output, data...)
				continue
			}
			c := Control{Type: fr.Type, Raw: fr.Body}
			if err := json.Unmarshal(fr.Body, &c.Fields); err != nil {
				return nil, fmt.Errorf("%s: record %d: %s body: %v", name, i, fr.Type, err)
			}
			id, _ := c.Fields["terminalId"].(string)
			e := exp(id)
			e.Controls = append(e.Controls, c)
		case record.Note:
			var a record.Annotation
			if err := json.Unmarshal(rec.Raw, &a); err != nil {
				return nil, fmt.Errorf("%s: record %d: note: %v", name, i, err)
			}
			switch a.Output {
			case record.OutputExact, record.OutputLength, record.OutputIgnore:
			default:
				return nil, fmt.Errorf("%s: record %d: note for %q: unknown output mode %q", name, i, a.TerminalID, a.Output)
			}
			exp(a.TerminalID).Mode = a.Output
		}
	}
	if !sawEOF {
		// The recording ended without the host closing its stream (the
		// sidecar was killed, say). Everything in it happened without
		// an EOF, so the replay waits for all of it before closing.
		f.Steps = append(f.Steps, Step{EOF: true, Before: progress()})
	}
	// A note may come after the frames it is about: apply modes to the
	// waits only now.
	for i := range f.Steps {
		for id, p := range f.Steps[i].Before {
			if f.Expect[id].Mode == record.OutputIgnore {
				p.Bytes = 0
				f.Steps[i].Before[id] = p
			}
		}
	}
	return f, nil
}
