//go:build unix

package session

import (
	"fmt"

	"github.com/ptyplex/ptyplex/screen/shot"
	"github.com/ptyplex/ptyplex/session/wire"
)

// maxScreenshot is the largest PNG that fits a reply once base64 and the
// envelope have their share of wire.MaxMessage.
const maxScreenshot = (wire.MaxMessage - 4<<10) / 4 * 3

// outputPNG answers an OUTPUT request for "format":"png" (see
// wire.ScreenshotData for why the daemon renders). The screen is copied
// under the state lock and rendered after it is released, so that the PTY
// reader is never held up by encoding (5-20 ms for a typical screen, up to
// several hundred for a 200x50 one in 256 colour pairs).
func (d *Daemon) outputPNG(f wire.Fields) (any, error) {
	if err := refuseTextFields(f); err != nil {
		return nil, err
	}
	withGen, err := f.Bool("with_gen")
	if err != nil {
		return nil, err
	}
	st := d.st
	st.mu.Lock()
	snap, err := shot.Take(st.scr)
	gen := st.gen
	st.mu.Unlock()
	if err != nil {
		return nil, wire.RequestError(fmt.Sprintf("Cannot render the screen: %v", err))
	}

	img, err := snap.Encode()
	if err != nil {
		return nil, wire.RequestError(fmt.Sprintf("Cannot render the screen: %v", err))
	}
	if len(img) > maxScreenshot {
		return nil, wire.RequestError(fmt.Sprintf("Cannot render the screen: the PNG is %d bytes, more than the %d a reply can carry in base64; resize the terminal smaller",
			len(img), maxScreenshot))
	}
	b := snap.Bounds()
	out := wire.ScreenshotData{
		PNG: img, Width: b.Dx(), Height: b.Dy(),
		Cursor:        wire.Cursor{Row: snap.CursorRow, Col: snap.CursorCol},
		CursorVisible: snap.CursorVisible,
		Size:          wire.Size{Rows: snap.Rows, Cols: snap.Cols},
	}
	if withGen {
		out.OutputGen = &gen
	}
	return out, nil
}

// refuseTextFields refuses what only a text read has: a line range, a
// changes read (a token, since: an image has no rows to list) and a
// character budget. Silently drawing the whole screen instead would give
// a client that asked for less, or for a diff, something else.
// "changes": false asks for nothing and is taken.
func refuseTextFields(f wire.Fields) error {
	for _, name := range []string{"from", "to", "since", "max_chars"} {
		if f.Has(name) {
			return notForPNG(name)
		}
	}
	changes, err := f.Bool("changes")
	if err != nil {
		return err
	}
	if changes {
		return notForPNG("changes")
	}
	return nil
}

func notForPNG(name string) error {
	return wire.Invalidf("field '%s' does not apply to format \"png\", which renders the visible screen", name)
}
