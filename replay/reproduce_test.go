package replay

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed fixtures are what the generator records today: the same
// host frames, and sidecar answers with the same meaning.
func TestGeneratorReproducesFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("records every scenario again")
	}
	out := t.TempDir()
	gen := exec.Command("go", "run", "./internal/genfixtures", "-sidecar", sidecarBin, "-out", out)
	var stderr bytes.Buffer
	gen.Stderr = &stderr
	require.NoError(t, gen.Run(), stderr.String())

	committed, err := filepath.Glob(filepath.Join(fixtures, "*.fixture"))
	require.NoError(t, err)
	fresh, err := filepath.Glob(filepath.Join(out, "*.fixture"))
	require.NoError(t, err)
	require.Equal(t, len(committed), len(fresh), "the generator and testdata/fixtures disagree on the scenarios")

	for _, path := range committed {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, err := Load(path)
			require.NoError(t, err)
			_, err = os.Stat(filepath.Join(out, name))
			require.NoError(t, err, "the generator no longer records %s", name)
			got, err := Load(filepath.Join(out, name))
			require.NoError(t, err)

			require.Equal(t, len(want.Steps), len(got.Steps), "host steps")
			for i := range want.Steps {
				assert.Equal(t, want.Steps[i].EOF, got.Steps[i].EOF, "step %d", i+1)
				assert.Equal(t, want.Steps[i].Frame, got.Steps[i].Frame, "host frame of step %d", i+1)
			}
			// The fresh recording, taken as what the sidecar sent, must
			// match the committed one by the replayer's own rules.
			rep := &Report{Fixture: name}
			for _, id := range want.Order {
				e := want.Expect[id]
				g := got.Expect[id]
				if g == nil {
					g = &Expected{}
				}
				compareTerm(rep, id, e, &Term{Controls: g.Controls, Output: g.Output})
			}
			// Which terminal is heard from first is not part of the
			// protocol: spawns run concurrently, and answers to
			// different OPENs may come in any order (PROTOCOL.md,
			// OPEN). The same terminals must appear, each as recorded.
			assert.ElementsMatch(t, want.Order, got.Order)
			assert.Empty(t, rep.Mismatches)
		})
	}
}
