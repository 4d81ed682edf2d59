package keys

import (
	"strings"
	"testing"
)

func TestKeyBytes(t *testing.T) {
	tests := []struct {
		keys      []string
		appCursor bool
		want      string
	}{
		{[]string{"Enter"}, false, "\r"},
		{[]string{"enter", "RETURN"}, false, "\r\r"},
		{[]string{"Tab", "ShiftTab", "Escape", "Esc", "Backspace", "Space"}, false, "\t\x1b[Z\x1b\x1b\x7f "},
		{[]string{"Up", "Down", "Right", "Left", "Home", "End"}, false, "\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F"},
		{[]string{"Up", "Down", "Right", "Left", "Home", "End"}, true, "\x1bOA\x1bOB\x1bOC\x1bOD\x1bOH\x1bOF"},
		{[]string{"PageUp", "Page Down", "page_up", "Delete", "Insert"}, false, "\x1b[5~\x1b[6~\x1b[5~\x1b[3~\x1b[2~"},
		{[]string{"F1", "F4", "F5", "F12"}, false, "\x1bOP\x1bOS\x1b[15~\x1b[24~"},
		{[]string{"Ctrl-C", "ctrl+d", "C-a", "^Z", "Control-z"}, false, "\x03\x04\x01\x1a\x1a"},
		{[]string{"Ctrl-[", "Ctrl-\\", "Ctrl-]", "Ctrl-_", "Ctrl-?", "Ctrl-@", "Ctrl-Space"}, false, "\x1b\x1c\x1d\x1f\x7f\x00\x00"},
		{[]string{"Alt-x", "M-b", "Alt-Enter"}, false, "\x1bx\x1bb\x1b\r"},
		{[]string{"Down*3", "Enter"}, false, "\x1b[B\x1b[B\x1b[B\r"},
	}
	for _, tt := range tests {
		got, err := Encode(tt.keys, tt.appCursor)
		if err != nil {
			t.Errorf("Encode(%q): %v", tt.keys, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("Encode(%q, app=%v) = %q, want %q", tt.keys, tt.appCursor, got, tt.want)
		}
	}
}

func TestKeyBytesErrors(t *testing.T) {
	for _, k := range []string{"Hyper-Q", "Ctrl-Up", "F13", "", "Down*0", "Down*999"} {
		_, err := Encode([]string{k}, false)
		if err == nil {
			t.Errorf("Encode(%q): no error", k)
			continue
		}
		if !strings.Contains(err.Error(), "key") && !strings.Contains(err.Error(), "repeat") {
			t.Errorf("Encode(%q): unhelpful error %v", k, err)
		}
	}
}
