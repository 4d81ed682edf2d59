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
