//go:build unix

package persist_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// TestSnapshotRandomStreamsInXtermJS is FuzzSnapshotRestores with the
// hosts' emulator as the screens, and a check of REVIVE's modes: for 250 streams drawn from its
// fragments (seeded, so each run draws the same), xterm.js headless fed
// the SNAPSHOT and then each probe shows what it shows fed the stream and
// the probe: lines, cursor and every mode modes.js reads. Here origin
// mode is among the fragments: xterm.js, as the SNAPSHOT, keeps it
// across DECRC. Left out where the screen the SNAPSHOT is rendered on
// follows xterm and xterm.js differs (below): the alternate screen
// entered again without clearing, the scroll region set on it, the
// margins xterm.js does not have, and a few xterm.js quirks.
func TestSnapshotRandomStreamsInXtermJS(t *testing.T) {
	x := startXtermJS(t)
	const cols, rows = 40, 12
	// The alternate screen entered again without clearing it (?47h,
	// ?1047h) shows what it held in xterm and in the screen the SNAPSHOT
	// is rendered on; xterm.js empties it whenever it is left. xterm.js
	// has no left and right margins (?69h), and text to the last column
	// with wrapping off (?7l) leaves its cursor past it, a wrap pending
	// once wrapping is on again (FuzzSnapshotRestores has both).
	var frags []string
	extra := []string{"\x1b[?6h", "\x1b[?6h\x1b[2;3H", "\x1b[?1015h", "\x1b[?1005h", "\x1b[?1016h", "\x1b[?1006l", "\x1b[?1015l"}
	for _, f := range append(extra, persist.SnapshotFragments...) {
		if f != "\x1b[?47h" && f != "\x1b[?1047h" && f != "\x1b[?69h" && f != "\x1b[?7l" {
			frags = append(frags, f)
		}
	}
	defaultStops := screen.New(cols, rows, screen.Options{}).TabStops()
	fresh := x.state(t, cols, rows, nil)
	r := rand.New(rand.NewPCG(49, 6))
	for i := 0; i < 250; i++ {
		// A scroll region on the alternate screen: xterm.js keeps one
		// for each screen, the alternate one whole when entered; the
		// screen the SNAPSHOT is rendered on (as xterm and tmux) one
		// for both, so what scrolls and where origin mode puts the
		// cursor would differ. So the alternate screen is entered only
		// with the whole screen as the region, and none is set on it.
		// (The tracker keeps one for each; the SNAPSHOT sets both.)
		var b strings.Builder
		gen := screen.New(cols, rows, screen.Options{})
		savedAt := 0 // lines scrolled off when the cursor was last saved
		for n := 1 + r.IntN(40); n > 0; n-- {
			f := frags[r.IntN(len(frags))]
			sets := strings.HasPrefix(f, "\x1b[") && strings.HasSuffix(f, "r") || f == "\x1b[!p"
			top, bottom := gen.ScrollRegion()
			if gen.AltScreen() && sets || f == "\x1b[?1049h" && (top != 0 || bottom != rows-1) {
				continue
			}
			// xterm.js's DECRC restores the set in use and leaves
			// the designations and GL, which the next SI or SO
			// invokes again; the tracker restores all three, as xterm
			// does. So once a cursor may have been restored, the
			// character sets are left alone.
			// Tab stops are the screen's in xterm and the screen
			// the SNAPSHOT is rendered on, each screen's in
			// xterm.js (the alternate one's the defaults when
			// entered): the alternate screen is entered only with
			// the default stops, and none is changed on it.
			tabs := f == "\x1bH" || strings.HasSuffix(f, "g") && strings.HasPrefix(f, "\x1b[") || strings.HasSuffix(f, "\x1bH")
			if gen.AltScreen() && tabs || f == "\x1b[?1049h" && fmt.Sprint(gen.TabStops()) != fmt.Sprint(defaultStops) {
				continue
			}
			// A cursor saved with a wrap pending keeps it in xterm
			// and the screen, not in xterm.js.
			saves := f == "\x1b7" || f == "\x1b[?1048h" || f == "\x1b[?1049h" || strings.HasPrefix(f, "\x1b[") && strings.HasSuffix(f, "s")
			if saves && gen.PendingWrap() {
				continue
			}
			// xterm.js saves the cursor's row counted from the top of
			// the scrollback: restored after lines scrolled off, it
			// goes up with them. No restore after a scroll, then.
			if restored(f) && gen.ScrolledOff() != savedAt {
				continue
			}
			// DECRC resets origin mode in xterm and the screen, not
			// in xterm.js: none while it is on.
			if gen.PrivateMode(6) && restored(f) {
				continue
			}
			// CHA in origin mode moves xterm.js's cursor down by the
			// region's top (it adds the top to the row it keeps).
			if gen.PrivateMode(6) && strings.Contains(f, "G") {
				continue
			}
			if restored(b.String()) && strings.Contains("\x0e\x0f\x1bn\x1bo\x1b(0\x1b)0\x1b(B\x1b)B\x1b*0", f) {
				continue
			}
			gen.Write([]byte(f))
			b.WriteString(f)
			if saves {
				savedAt = gen.ScrolledOff()
			}
		}
		stream := b.String()
		restores := restored(stream)
		data, err := persist.RenderSnapshot(cols, rows, []byte(stream))
		if err != nil {
			t.Fatal(err)
		}
		// A REVIVE after the stream leaves xterm.js in a fresh
		// terminal's modes (the title kept).
		revived := x.state(t, cols, rows, persist.RenderRevive(cols, rows, []byte(stream)))
		for k, w := range fresh.Modes {
			switch k {
			case "title", "cursorBlink", "optionCursorBlink":
				// The title stays; ?12 may have set the option
				// ("blinks" is compared).
				continue
			}
			if !reflect.DeepEqual(w, revived.Modes[k]) {
				t.Fatalf("stream %d %q: revived, %s is %v, in a fresh terminal %v", i, stream, k, revived.Modes[k], w)
			}
		}
		for _, probe := range persist.SnapshotProbes {
			if restores && strings.ContainsAny(probe, "\x0e\x0f") {
				continue // see the modes left out below
			}
			want := x.state(t, cols, rows, []byte(stream+probe))
			got := x.state(t, cols, rows, []byte(data+probe))
			var diffs []string
			if !reflect.DeepEqual(want.Lines, got.Lines) {
				diffs = append(diffs, "lines")
			}
			if want.Row != got.Row || want.Col != got.Col {
				diffs = append(diffs, "cursor")
			}
			for k, w := range want.Modes {
				if k == "scrollRegion" && want.Modes["bufferType"] != got.Modes["bufferType"] {
					continue // reported below, as the buffer shown
				}
				if (k == "optionCursorBlink" || k == "cursorBlink") && (strings.Contains(stream, "\x1bc") || strings.Contains(stream, "\x1b[!p")) {
					// ?12 sets both in xterm.js, RIS and DECSTR
					// reset the mode, not the option: the SNAPSHOT
					// sets the mode, and the cursor blinks as it
					// did ("blinks", compared).
					continue
				}
				if k == "cursorHidden" && strings.Contains(stream, "\x1bc") {
					continue // xterm.js's RIS leaves a hidden cursor hidden
				}
				if (k == "charsets" || k == "glevel") && restores {
					continue // the set in use ("charset") is compared
				}
				if k == "sgr" && sameVisiblePen(w, got.Modes[k]) {
					continue
				}
				if !reflect.DeepEqual(w, got.Modes[k]) {
					diffs = append(diffs, k)
				}
			}
			if len(diffs) > 0 {
				t.Fatalf("stream %d %q, probe %q: %v differ\n  snapshot: lines %q cursor %d,%d modes %v\n  stream:   lines %q cursor %d,%d modes %v",
					i, stream, probe, diffs, got.Lines, got.Row, got.Col, got.Modes, want.Lines, want.Row, want.Col, want.Modes)
			}
		}
	}
}

// sameVisiblePen says two of modes.js's pens ("fg,bg,underline style,
// underline colour") show the same: xterm.js keeps the bits of an
// earlier true colour under a palette colour that replaced it (the
// palette index is the low byte), and its DECRC restores the colours
// and flags it saved and leaves the underline's style and colour as they
// were, where the SNAPSHOT restores the whole pen: those two count only
// while the pen underlines (the colour shows once SGR 4 sets the flag
// alone).
func sameVisiblePen(a, b any) bool {
	parse := func(v any) (fg, bg uint64, ext string, ok bool) {
		parts := strings.SplitN(fmt.Sprint(v), ",", 3)
		if len(parts) != 3 {
			return 0, 0, "", false
		}
		_, err1 := fmt.Sscan(parts[0], &fg)
		_, err2 := fmt.Sscan(parts[1], &bg)
		return norm(fg), norm(bg), parts[2], err1 == nil && err2 == nil
	}
	fa, ba, ea, ok1 := parse(a)
	fb, bb, eb, ok2 := parse(b)
	const underline = 0x10000000 // xterm.js's FgFlags.UNDERLINE
	return ok1 && ok2 && fa == fb && ba == bb && (fa&underline == 0 || ea == eb)
}

// norm keeps what shows of an xterm.js colour word: its flags and colour
// mode, and the colour's 8 bits for a palette colour, 24 for true colour.
func norm(v uint64) uint64 {
	const flags, mode = 0xfc000000, 0x03000000
	switch v & mode {
	case 0:
		return v & flags
	case mode: // true colour
		return v
	}
	return v&(flags|mode) | v&0xff
}

// restored says the stream may have restored a saved cursor.
func restored(stream string) bool {
	for _, s := range []string{"\x1b8", "\x1b[u", "?1048l", "?1049l"} {
		if strings.Contains(stream, s) {
			return true
		}
	}
	return false
}
