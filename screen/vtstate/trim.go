package vtstate

// Trim gives back the room kept for checkpoints to come, for a stream
// that has ended (a finished terminal's, kept for a host that may attach
// it again): the tracker then holds only the checkpoints it has.
func (t *Tracker) Trim() {
	if len(t.cps) == 0 {
		t.cps = nil
		return
	}
	t.cps = append([]mark(nil), t.cps...)
}
