//go:build unix

package persist

import (
	"encoding/json"
	"testing"

	"github.com/ptyplex/ptyplex/screen/vtstate"
)

// A live upgrade hands the mode tracker over (termState.VT, as JSON):
// the next image's tracker has the same state and checkpoints, and
// finishes a sequence the freeze cut in two from the journal. A state
// from a binary without the field rebuilds the tracker from the journal.
func TestTrackerHandedOver(t *testing.T) {
	early := "\x1b[?1049h\x1b[?1h\x1b=\x1b[?1000h\x1b[?1006h\x1b]2;vim\x07" // before the journal's start
	kept := "text\x1b[3;20r\x1b[1;31mmore text\x1b[?20"                     // the journal, ending mid-sequence
	rest := "04h after the upgrade"
	const quota = 64 << 10
	old := newTracker(80, 24, quota)
	old.Write([]byte(early + kept))
	ts := termState{Quota: quota, Cols: 80, Rows: 24, Start: uint64(len(early)), End: uint64(len(early + kept)),
		VT: &vtHandover{State: old.State(), Pending: old.Pending(), Checkpoints: old.Checkpoints()}}
	b, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	var back termState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	vt := back.restoreTracker([]byte(kept))
	vt.Write([]byte(rest))
	want := vtstate.New(80, 24, 0)
	want.Write([]byte(early + kept + rest))
	if vt.State() != want.State() {
		t.Fatalf("handed over:\n got %+v\nwant %+v", vt.State(), want.State())
	}
	if set, _ := vt.Mode(2004, true); !set || vt.Offset() != uint64(len(early+kept+rest)) {
		t.Fatalf("the sequence cut by the freeze: ?2004 %v, offset %d", set, vt.Offset())
	}
	if cps := vt.Checkpoints(); len(cps) != len(old.Checkpoints()) {
		t.Fatalf("%d checkpoints, handed %d", len(cps), len(old.Checkpoints()))
	}
	// From an older binary: only what the journal holds.
	back.VT = nil
	vt = back.restoreTracker([]byte(kept))
	if s := vt.State(); s.Alt || s.Top != 2 || s.Pen.FG != (vtstate.Color{Kind: vtstate.Kind16, V: 1}) || vt.Offset() != back.End {
		t.Fatalf("rebuilt from the journal: %+v at %d", s, vt.Offset())
	}
}

// The snapshot's plan reaches back to where the alternate screen was
// entered when the journal still holds it, and starts at a checkpoint.
func TestSnapshotPlanReachesTheAltScreenEntry(t *testing.T) {
	tm := &term{j: newJournal(1 << 20), vt: newTracker(80, 24, 64<<10)}
	add := func(s string) {
		tm.j.append([]byte(s))
		tm.trackLocked([]byte(s))
	}
	for i := 0; i < 2000; i++ {
		add("main screen line, before the program\r\n")
	}
	altAt := tm.j.end
	add("\x1b[?1049h\x1b[H\x1b[2J")
	for i := 0; i < 3000; i++ {
		add("\x1b[5;1Hdrawn on the alternate screen\r\n")
	}
	from := tm.j.tailStart(24+snapshotScrollback, snapshotMaxInput)
	start, shown, prime := tm.snapshotPlanLocked(tm.j.end-100, 24, snapshotMaxInput)
	if start > altAt-24*38 || prime == nil || prime.Alt {
		t.Fatalf("plan starts at %d (alt entered at %d, tail from %d), prime %+v", start, altAt, from, prime)
	}
	if cp, _ := tm.vt.Checkpoint(start); cp.Off != start {
		t.Fatalf("plan starts at %d, not at a checkpoint (%d)", start, cp.Off)
	}
	// The lines shown begin a screen's worth of lines before the entry,
	// after the checkpoint: the bytes between only set the state.
	if want := tm.j.linesBefore(altAt, 24, tm.j.start); shown != want || shown < start {
		t.Fatalf("lines shown from %d, want %d (plan starts at %d)", shown, want, start)
	}
}
