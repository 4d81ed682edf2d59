//go:build unix

package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cell size of screen/shot, restated so that a change there is seen
// here as a change of the CLI's promise.
const cellW, cellH = 9, 19

// colourProgram draws a red-background pair of cells at row 0 col 0-1, a
// true-colour full block at row 0 col 3, then "ready" on row 1 with the
// cursor after it, and waits.
const colourProgram = `printf '\033[H\033[2J\033[41m  \033[0m \033[38;2;10;200;30m\342\226\210\033[0m\r\nready'; read x`

// cellCentre returns the colour in the middle of the cell at row, col.
func cellCentre(img image.Image, row, col int) color.RGBA {
	r, g, b, _ := img.At(col*cellW+cellW/2, row*cellH+cellH/2).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
}

func decodePNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err, "the output is not a PNG")
	require.Equal(t, image.Pt(80*cellW, 24*cellH), img.Bounds().Size(), "image size of an 80x24 screen")
	return img
}

// assertColourCells checks the cells colourProgram drew, and the cursor
// drawn as an inverse block (default foreground, white) after "ready".
func assertColourCells(t *testing.T, img image.Image) {
	t.Helper()
	red := color.RGBA{0xcd, 0, 0, 0xff}
	assert.Equal(t, red, cellCentre(img, 0, 0), "SGR 41 background, cell 0,0")
	assert.Equal(t, red, cellCentre(img, 0, 1), "SGR 41 background, cell 0,1")
	assert.Equal(t, color.RGBA{0, 0, 0, 0xff}, cellCentre(img, 0, 2), "default background, cell 0,2")
	assert.Equal(t, color.RGBA{10, 200, 30, 0xff}, cellCentre(img, 0, 3), "true-colour full block, cell 0,3")
	assert.Equal(t, color.RGBA{0xff, 0xff, 0xff, 0xff}, cellCentre(img, 1, 5), "cursor block after \"ready\", cell 1,5")
	assert.Equal(t, color.RGBA{0, 0, 0, 0xff}, cellCentre(img, 1, 6), "blank past the cursor, cell 1,6")
}

// TestOutputPNGOfLiveSession renders a live session's coloured screen
// with `output --png` and checks known cells' pixels.
func TestOutputPNGOfLiveSession(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", colourProgram)
	s.waitText("ready")
	path := filepath.Join(t.TempDir(), "screen.png")
	s.ok("output", "--png", path)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assertColourCells(t, decodePNG(t, data))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a new PNG is private")

	// A file of ours is replaced, and --png - writes to stdout.
	s.ok("output", "--png", path)
	again, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, data, again, "the same screen gives the same PNG bytes")
	out := s.ok("output", "--png", "-")
	assert.Equal(t, string(data), out)
}

// The protocol form: OUTPUT with "format":"png" answers the image in
// base64 with its size, and refuses a line range.
func TestOutputPNGProtocol(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", colourProgram)
	s.waitText("ready")
	d := rawCall(t, s.sock, `{"type":"OUTPUT","format":"png"}`)
	require.Equal(t, "ok", d["status"], "%v", d)
	data := d["data"].(map[string]any)
	assert.EqualValues(t, 80*cellW, data["width"])
	assert.EqualValues(t, 24*cellH, data["height"])
	assert.Equal(t, map[string]any{"row": 1.0, "col": 5.0}, data["cursor"])
	assert.Equal(t, true, data["cursor_visible"])
	raw, err := base64.StdEncoding.DecodeString(data["png"].(string))
	require.NoError(t, err)
	assertColourCells(t, decodePNG(t, raw))

	bad := rawCall(t, s.sock, `{"type":"OUTPUT","format":"png","from":-5}`)
	assert.Equal(t, "error", bad["status"])
	assert.Contains(t, bad["error"], `'from' does not apply to format "png"`)

	g := rawCall(t, s.sock, `{"type":"OUTPUT","format":"png","with_gen":true}`)
	require.Equal(t, "ok", g["status"], "%v", g)
	assert.Greater(t, g["data"].(map[string]any)["output_gen"], 0.0, "with_gen answers the output generation")

	// A screen too large to render is refused with a reason, and the
	// daemon goes on serving.
	s.ok("resize", "--size", "1000x500")
	big := rawCall(t, s.sock, `{"type":"OUTPUT","format":"png"}`)
	assert.Equal(t, "error", big["status"])
	assert.Contains(t, big["error"], "Cannot render the screen: a 1000x500 screen renders to 9000x9500 pixels")
	assert.Contains(t, big["error"], "resize the terminal smaller")
	r := s.run("output", "--png", filepath.Join(t.TempDir(), "big.png"))
	assert.Equal(t, exitFail, r.code, "%v", r)
	assert.Contains(t, r.stderr, "resize the terminal smaller")
	assert.Equal(t, "ok", rawCall(t, s.sock, `{"type":"STATUS"}`)["status"])
}

// --png refuses a symbolic link planted under its name, leaving the file
// it points at as it was, and flags that do not apply.
func TestOutputPNGRefusals(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", colourProgram)
	s.waitText("ready")
	dir := t.TempDir()
	victim := filepath.Join(dir, "precious")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	link := filepath.Join(dir, "shot.png")
	require.NoError(t, os.Symlink(victim, link))
	r := s.run("output", "--png", link)
	assert.Equal(t, exitFail, r.code, "%v", r)
	assert.Contains(t, r.stderr, "refusing to write to "+link+": it is a symbolic link")
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(got))

	for _, extra := range [][]string{{"--from", "-3"}, {"--follow"}, {"--json"}, {"--cursor", "print"}, {"-n"}} {
		r := s.run(append([]string{"output", "--png", filepath.Join(dir, "x.png")}, extra...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %v", extra, r)
		assert.Contains(t, r.stderr, "cannot be combined with it", "%v", extra)
		assert.True(t, strings.Contains(r.stderr, extra[0]), "the error names %s: %s", extra[0], r.stderr)
	}
	_, err = os.Stat(filepath.Join(dir, "x.png"))
	assert.True(t, os.IsNotExist(err), "a refused request creates no file")
}
