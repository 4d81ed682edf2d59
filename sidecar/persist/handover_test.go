//go:build unix

package persist

import "testing"

// The compiled-in mark says the format this binary reads.
func TestHandoverMarkSaysTheFormat(t *testing.T) {
	if got := handoverMarkFormat(); got != HandoverFormat {
		t.Fatalf("handoverMark says format %d, HandoverFormat is %d: change both together", got, HandoverFormat)
	}
}
