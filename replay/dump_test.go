package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/record"
)

// A fixture cut short inside a record (a killed sidecar's) is dumped up
// to the cut, every whole record as a whole file shows it, and only then
// reported: before, the dump printed nothing but the error.
func TestDumpShowsWholeRecordsOfACutFixture(t *testing.T) {
	src := filepath.Join(fixtures, "echo-round-trip.fixture")
	whole, err := os.ReadFile(src)
	require.NoError(t, err)
	var full bytes.Buffer
	require.NoError(t, Dump(&full, src))
	lines := strings.Split(strings.TrimSuffix(full.String(), "\n"), "\n")
	n := len(lines) - 1 // the first line names the file
	require.Greater(t, n, 3)

	cut := filepath.Join(t.TempDir(), "cut.fixture")
	require.NoError(t, os.WriteFile(cut, whole[:len(whole)-2], 0o600))
	var out bytes.Buffer
	err = Dump(&out, cut)
	require.ErrorIs(t, err, record.ErrTruncated)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, got, 1+(n-1)+1, "a title, the whole records, where it ends:\n%s", out.String())
	assert.Equal(t, cut+": "+strconv.Itoa(n-1)+" whole records, then a record cut short", got[0])
	assert.Equal(t, lines[1:n], got[1:n], "the whole records, as a whole file shows them")
	assert.Contains(t, got[n], "the file ends inside record "+strconv.Itoa(n-1))

	// Other damage is reported at once.
	require.NoError(t, os.WriteFile(cut, []byte("not a fixture\n"), 0o600))
	out.Reset()
	err = Dump(&out, cut)
	require.ErrorIs(t, err, record.ErrFormat)
	assert.Empty(t, out.String())
}
