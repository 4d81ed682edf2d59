//go:build unix

package mcpserver_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
	"unicode/utf8"
)

// TestOutputChangesCostThroughMCP takes the 30 bash and vim steps of the
// CLI's TestOutputChangesCost through the MCP tools, and after each one
// reads the screen both ways: output alone and output with since. It
// reports the characters of the tools' text results each way.
func TestOutputChangesCostThroughMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := connect(t)
	s := c.shell(map[string]any{"size": "80x24"})
	prompt := `\$ ?$`
	steps := []struct{ text, key, wait string }{
		{"echo hello", "Enter", `(?m)^hello\n` + prompt},
		{"cd " + dir, "Enter", prompt},
		{"ls /", "Enter", prompt},
		{"seq 1 30", "Enter", `(?m)^30\n` + prompt},
		{"pwd", "Enter", regexp.QuoteMeta(filepath.Base(dir)) + `\n` + prompt},
		{"echo $((6*7))", "Enter", `(?m)^42\n` + prompt},
		{"for i in 1 2 3; do echo line$i; done", "Enter", `(?m)^line3\n` + prompt},
		{"echo a b | tr ' ' -", "Enter", `(?m)^a-b\n` + prompt},
		{"seq -f 'line %g of the file' 1 40 > f.txt", "Enter", `f\.txt\n` + prompt},
		{"vim -u NONE -N -c 'set ruler' f.txt", "Enter", `"f\.txt" 40L`},
		{"5G", "", `5,1 `},
		{"dd", "", `(?m)^line 4 of the file\nline 6 of the file`},
		{"A (edited)", "Escape", `(?m)^line 6 of the file \(edited\)`},
		{"/line 20", "Enter", `19,1 `},
		{"cwLINE", "Escape", `(?m)^LINE 20 of the file`},
		{"G", "", `39,1 `},
		{"oappended at the end", "Escape", `(?m)^appended at the end`},
		{"u", "", `(?m)^line 40 of the file\n~`},
		{"gg", "", `1,1 `},
		{":%s/of the file/./", "Enter", `substitutions`},
		{":w", "Enter", `written`},
		{":q", "Enter", prompt},
		{"grep -c LINE f.txt", "Enter", `(?m)^1\n` + prompt},
		{"wc -l f.txt", "Enter", `(?m)^39 f\.txt\n` + prompt},
		{"head -3 f.txt", "Enter", `(?m)^line 3 \.\n` + prompt},
		{"echo done", "Enter", `(?m)^done\n` + prompt},
		{"seq 100 105", "Enter", `(?m)^105\n` + prompt},
		{"ls -la | head -3", "Enter", prompt},
		{"echo bye", "Enter", `(?m)^bye\n` + prompt},
		{"true", "Enter", prompt},
	}
	tok := ok[changes](c, "output", map[string]any{"session": s.Session}).Token
	var full, since int
	for i, st := range steps {
		args := map[string]any{"session": s.Session, "text": st.text, "wait_regex": st.wait,
			"timeout_ms": deadline.Milliseconds(), "include_screen": false}
		if st.key != "" {
			args["keys"] = []string{st.key}
		}
		in := ok[map[string]any](c, "input", args)
		if w, _ := in["wait"].(map[string]any); w == nil || w["met"] != true {
			t.Fatalf("step %d (%q): %v", i+1, st.text, in)
		}
		res := c.call("output", map[string]any{"session": s.Session, "since": tok})
		if res.IsError {
			t.Fatalf("step %d: output since %s: %s", i+1, tok, text(res))
		}
		since += utf8.RuneCountInString(text(res))
		var ch changes
		if b, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(b, &ch) != nil || ch.Token == "" {
			t.Fatalf("step %d: no token in %s", i+1, text(res))
		}
		tok = ch.Token
		full += utf8.RuneCountInString(text(c.call("output", map[string]any{"session": s.Session})))
	}
	ratio := float64(full) / float64(since)
	t.Logf("%d steps through bash and vim, MCP text results: output %d characters, output with since %d (%.1fx fewer)",
		len(steps), full, since, ratio)
	if ratio < 1.2 {
		t.Errorf("reads with since returned %d characters against %d for whole reads: less than 1.2x fewer", since, full)
	}
}
