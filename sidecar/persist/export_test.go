//go:build unix

package persist

import (
	"bytes"
	"encoding/json"

	"github.com/ptyplex/ptyplex/proto"
)

// OpenCandidate is openCandidate, for the attack tests.
var OpenCandidate = openCandidate

// ExecCandidate is execCandidate, for the attack tests' helper process.
var ExecCandidate = execCandidate

// HandoverMark is handoverMark, for tests that make binaries of another
// format out of the real one.
const HandoverMark = handoverMark

// SnapshotFragments and SnapshotProbes are FuzzSnapshotRestores' pieces
// of streams and its probes.
var SnapshotFragments, SnapshotProbes = snapshotFragments, snapshotProbes

// RenderSnapshot is the data of the SNAPSHOT a terminal of the given size
// would send after stream, all of it in its journal.
func RenderSnapshot(cols, rows int, stream []byte) (string, error) {
	tr := newTracker(uint16(cols), uint16(rows), 1<<20)
	tr.Write(stream)
	st := snapshotTail{id: "s", cols: cols, rows: rows, tail: [][]byte{stream}, size: len(stream), final: tr.State()}
	f, err := proto.NewReader(bytes.NewReader(st.frame())).ReadFrame()
	if err != nil {
		return "", err
	}
	var sn proto.Snapshot
	err = json.Unmarshal(f.Body, &sn)
	return sn.Data, err
}

// RenderRevive is what a REVIVE of a terminal that died after stream
// shows before the new program's output.
func RenderRevive(cols, rows int, stream []byte) []byte {
	tr := newTracker(uint16(cols), uint16(rows), 1<<20)
	tr.Write(stream)
	return renderScreen(snapshotTail{id: "s", cols: cols, rows: rows, tail: [][]byte{stream}, size: len(stream), final: tr.State()})
}

// RenderSnapshotJournal is the data of the SNAPSHOT a terminal of the
// given size, with a journal of journal bytes, sends after the stream
// read in pieces (the journal losing its oldest bytes as it fills, the
// tracker fed each piece as the reader feeds it), and the journal's
// start.
func RenderSnapshotJournal(cols, rows, journal int, pieces [][]byte) (string, uint64, error) {
	t := &term{id: "s", cols: uint16(cols), rows: uint16(rows), j: newJournal(journal), vt: newTracker(uint16(cols), uint16(rows), journal)}
	for _, p := range pieces {
		t.j.append(p)
		t.trackLocked(p)
	}
	st := t.snapshotTailLocked()
	f, err := proto.NewReader(bytes.NewReader(st.frame())).ReadFrame()
	if err != nil {
		return "", 0, err
	}
	var sn proto.Snapshot
	err = json.Unmarshal(f.Body, &sn)
	return sn.Data, t.j.start, err
}
