// Package keys turns key names ("Enter", "Up", "C-c", "F5", "Down*3") into
// the bytes a terminal sends for them. It is the one key table of ptyplex:
// the CLI's `input --keys` and the MCP server's input tool both use it.
package keys

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Cursor-key encodings. In normal mode the arrows (and Home/End) send CSI
// sequences; in application cursor-key mode (DECCKM, set by vim, less,
// readline in some setups) they send SS3 sequences.
var (
	normalCursorKeys = map[string]string{
		"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
		"home": "\x1b[H", "end": "\x1b[F",
	}
	appCursorKeys = map[string]string{
		"up": "\x1bOA", "down": "\x1bOB", "right": "\x1bOC", "left": "\x1bOD",
		"home": "\x1bOH", "end": "\x1bOF",
	}
)

// namedKeys are the keys whose bytes do not depend on a terminal mode.
// Names are matched without case and without spaces, dashes or
// underscores, so "Page Up", "page_up" and "PageUp" are the same key.
var namedKeys = map[string]string{
	"enter": "\r", "return": "\r", "cr": "\r", "lf": "\n", "newline": "\n",
	"tab": "\t", "shifttab": "\x1b[Z", "backtab": "\x1b[Z",
	"escape": "\x1b", "esc": "\x1b",
	"backspace": "\x7f", "bs": "\x7f",
	"space":  " ",
	"delete": "\x1b[3~", "del": "\x1b[3~",
	"insert": "\x1b[2~", "ins": "\x1b[2~",
	"pageup": "\x1b[5~", "pgup": "\x1b[5~",
	"pagedown": "\x1b[6~", "pgdn": "\x1b[6~", "pgdown": "\x1b[6~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// maxRepeat bounds "Down*N".
const maxRepeat = 200

// Encode encodes a list of key names. appCursor selects the application
// cursor-key encoding of the arrows, Home and End.
//
// Accepted forms: a name from namedKeys or an arrow/Home/End; Ctrl-X
// (also Ctrl+X, C-x, ^X) for a letter or one of @ [ \ ] ^ _ ? and Space;
// Alt-X (also Meta-X, M-x), which sends ESC before the key; and any of
// these followed by *N to repeat it N times ("Down*3").
func Encode(keys []string, appCursor bool) ([]byte, error) {
	var out []byte
	for _, k := range keys {
		name, n, err := splitRepeat(k)
		if err != nil {
			return nil, err
		}
		b, err := keyByName(name, appCursor)
		if err != nil {
			return nil, err
		}
		for range n {
			out = append(out, b...)
		}
	}
	return out, nil
}

func splitRepeat(k string) (string, int, error) {
	i := strings.LastIndexByte(k, '*')
	if i <= 0 || i == len(k)-1 {
		return k, 1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(k[i+1:]))
	if err != nil {
		return k, 1, nil // not a count: "*" is part of the name
	}
	if n < 1 || n > maxRepeat {
		return "", 0, fmt.Errorf("key %q: repeat count must be 1..%d", k, maxRepeat)
	}
	return k[:i], n, nil
}

func keyByName(k string, appCursor bool) (string, error) {
	raw := strings.TrimSpace(k)
	if mod, rest, ok := cutModifier(raw, "ctrl", "control", "c", "^"); ok {
		if b, ok := ctrlKey(rest); ok {
			return b, nil
		}
		return "", fmt.Errorf("unknown key %q: Ctrl- combines with a letter, Space or one of @[\\]^_? (got %q after %s)", k, rest, mod)
	}
	if _, rest, ok := cutModifier(raw, "alt", "meta", "m"); ok {
		if len(rest) == 1 {
			return "\x1b" + rest, nil
		}
		b, err := keyByName(rest, appCursor)
		if err != nil {
			return "", fmt.Errorf("unknown key %q: %v", k, err)
		}
		return "\x1b" + b, nil
	}
	name := normalize(raw)
	if appCursor {
		if b, ok := appCursorKeys[name]; ok {
			return b, nil
		}
	}
	if b, ok := normalCursorKeys[name]; ok {
		return b, nil
	}
	if b, ok := namedKeys[name]; ok {
		return b, nil
	}
	return "", fmt.Errorf("unknown key %q; known keys: %s, Ctrl-A..Ctrl-Z, Alt-<key>, and <key>*N to repeat", k, KnownList())
}

// cutModifier splits "Ctrl-C", "Ctrl+C", "C-c" or "^C" style names.
// "^" takes no separator; the others need '-' or '+'.
func cutModifier(k string, names ...string) (mod, rest string, ok bool) {
	lower := strings.ToLower(k)
	for _, m := range names {
		if m == "^" {
			if strings.HasPrefix(k, "^") && len(k) == 2 {
				return m, k[1:], true
			}
			continue
		}
		if len(lower) > len(m)+1 && strings.HasPrefix(lower, m) && (lower[len(m)] == '-' || lower[len(m)] == '+') {
			return k[:len(m)], k[len(m)+1:], true
		}
	}
	return "", "", false
}

func ctrlKey(rest string) (string, bool) {
	if strings.EqualFold(rest, "space") {
		return "\x00", true
	}
	if len(rest) != 1 {
		return "", false
	}
	c := rest[0]
	switch {
	case 'a' <= c && c <= 'z':
		return string(rune(c - 'a' + 1)), true
	case 'A' <= c && c <= 'Z':
		return string(rune(c - 'A' + 1)), true
	}
	switch c {
	case '@', ' ', '2':
		return "\x00", true
	case '[':
		return "\x1b", true
	case '\\':
		return "\x1c", true
	case ']':
		return "\x1d", true
	case '^', '6':
		return "\x1e", true
	case '_', '-':
		return "\x1f", true
	case '?':
		return "\x7f", true
	}
	return "", false
}

func normalize(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r == ' ' || r == '-' || r == '_' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Names is the documented list of key names, for errors and help texts.
var Names = []string{
	"Enter", "Tab", "ShiftTab", "Escape", "Backspace", "Space", "Up", "Down", "Left", "Right",
	"Home", "End", "PageUp", "PageDown", "Insert", "Delete",
	"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12",
}

// KnownList is Names sorted and comma-separated.
func KnownList() string {
	names := append([]string(nil), Names...)
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Help describes the accepted key names, for help texts and tool
// descriptions.
const Help = `Enter, Tab, ShiftTab, Escape (Esc), Backspace, Space, Up, Down, Left,
Right, Home, End, PageUp, PageDown, Insert, Delete, F1..F12; Ctrl-X (also
Ctrl+X, C-x, ^X) for a letter, Space or one of @ [ \ ] ^ _ ?; Alt-<key>
(also M-<key>, sends Escape first); <key>*N repeats a key N times
("Down*3"). Names ignore case, spaces, dashes and underscores ("Page Up",
"page_up"). Up/Down/Left/Right/Home/End follow the program's cursor-key
mode: ESC O A in application cursor mode (vim, less), ESC [ A otherwise.`
