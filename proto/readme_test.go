package proto

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestProtocolExamplesUseWireNames checks the frame protocol part of
// PROTOCOL.md, which host authors write their frames from: every JSON
// example there is a valid body of its frame (only that body's wire names,
// and every field that is always sent), and every field of every body is
// named in an example or in a field table.
func TestProtocolExamplesUseWireNames(t *testing.T) {
	b, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, doc, ok := strings.Cut(string(b), "\n## 1. ")
	if !ok {
		t.Fatal("PROTOCOL.md has no section 1, the frame protocol")
	}
	doc, _, _ = strings.Cut(doc, "\n## 2. ")
	byFrame := map[string][]any{
		"OPEN": {Open{}}, "RESIZE": {Resize{}}, "CLOSE": {Close{}}, "CREDIT": {Credit{}},
		"OPENED": {Opened{}}, "EXIT": {Exit{}}, "ERROR": {Error{}}, "SIGNAL": {Signal{}},
		"FOREGROUND": {Foreground{}, ForegroundInfo{}}, "HELLO": {Hello{}},
	}
	// A fenced example belongs to the frames its section is about.
	bySection := map[string][]any{
		"SIGNAL and FOREGROUND (extensions)": {Opened{}, Signal{}, Foreground{}, ForegroundInfo{}},
		"Persistent terminals (`--persist NAME`, extension)": {Opened{}, Listed{}, Attach{}, Attached{},
			Snapshot{}, Detached{}, Close{}, Detach{}, Error{}, Upgrade{}, Upgrading{}, HostEnded{}, Revive{}},
		"HELLO (extension): the handshake": {Hello{}},
		// A PING's body is any small JSON object, echoed by the PONG;
		// the page's examples carry a sequence number, and "now" (PingNow).
		"PING and PONG (extension): the keepalive": {struct {
			Seq int  `json:"seq"`
			Now bool `json:"now,omitempty"`
		}{}},
	}
	for frame, bodies := range byFrame {
		bySection[frame] = bodies
	}
	var all []any
	for _, bodies := range bySection {
		all = append(all, bodies...)
	}
	named := map[string]bool{} // wire names the page shows
	check := func(where, example string, candidates []any) {
		keys := topLevelKeys(example)
		for _, body := range candidates {
			if fits(keys, body) {
				for _, k := range keys {
					named[k] = true
				}
				return
			}
		}
		t.Errorf("PROTOCOL.md, %s: %s is no valid body of %v (keys %v)", where, example, typeNames(candidates), keys)
	}
	section := ""
	inJSON := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			section = strings.TrimPrefix(line, "### ")
		case strings.HasPrefix(line, "```"):
			inJSON = !inJSON && strings.TrimPrefix(line, "```") == "json"
		case inJSON && strings.TrimSpace(line) != "":
			candidates, ok := bySection[section]
			if !ok {
				candidates = all
			}
			check("section "+section, line, candidates)
		case strings.HasPrefix(line, "| "):
			// A field table's first cell names fields: "cols, rows".
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), "|")
			for _, f := range strings.Split(cell, ",") {
				named[strings.TrimSpace(f)] = true
			}
		}
	}
	// Bodies quoted in the text: `OPENED {"pid":4242,"terminalId":"t1"}`.
	inline := regexp.MustCompile("`([A-Z]+) (\\{[^`]*\\})`")
	for _, m := range inline.FindAllStringSubmatch(doc, -1) {
		if bodies, ok := byFrame[m[1]]; ok {
			check(m[1]+" in the text", strings.ReplaceAll(m[2], "\n", " "), bodies)
		}
	}
	for _, body := range all {
		for _, name := range jsonNames(body) {
			if !named[name] {
				t.Errorf("PROTOCOL.md never names %T's field %q", body, name)
			}
		}
	}
}

// topLevelKeys lists a JSON object's keys. Examples that elide a value
// ("terminalId":…) are not JSON; their keys are read from the text.
func topLevelKeys(example string) []string {
	var obj map[string]json.RawMessage
	var keys []string
	if err := json.Unmarshal([]byte(example), &obj); err == nil {
		for k := range obj {
			keys = append(keys, k)
		}
	} else {
		for _, m := range regexp.MustCompile(`"([A-Za-z]+)"\s*:`).FindAllStringSubmatch(example, -1) {
			keys = append(keys, m[1])
		}
	}
	slices.Sort(keys)
	return keys
}

// fits reports whether keys are a valid set of fields for body: each one
// of its wire names, and every field it always sends (no omitempty) there.
func fits(keys []string, body any) bool {
	rt := reflect.TypeOf(body)
	for i := range rt.NumField() {
		name, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && opts != "omitempty" && !slices.Contains(keys, name) {
			return false
		}
	}
	names := jsonNames(body)
	for _, k := range keys {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return len(keys) > 0
}

func typeNames(bodies []any) []string {
	var names []string
	for _, b := range bodies {
		names = append(names, reflect.TypeOf(b).Name())
	}
	return names
}

// jsonNames lists a struct's JSON field names in declaration order.
func jsonNames(v any) []string {
	var names []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return names
}

// TestSidecarBodiesHaveSortedKeys checks that every body the sidecar writes
// declares its fields in the order of their JSON names: Marshal writes them
// in declaration order, and the reference sidecar writes sorted keys.
func TestSidecarBodiesHaveSortedKeys(t *testing.T) {
	for _, body := range []any{Opened{}, Exit{}, Error{}, ForegroundInfo{}} {
		if names := jsonNames(body); !slices.IsSorted(names) {
			t.Errorf("%T writes its keys as %v, not sorted", body, names)
		}
	}
	code := 42
	for _, c := range []struct {
		body any
		want string
	}{
		{Exit{TerminalID: "t-1", ExitCode: &code}, `{"exitCode":42,"terminalId":"t-1"}`},
		{Error{TerminalID: "t-1", Message: "terminal id already exists"}, `{"message":"terminal id already exists","terminalId":"t-1"}`},
		{Opened{TerminalID: "t-1", PID: 7}, `{"pid":7,"terminalId":"t-1"}`},
	} {
		if got := string(Marshal(c.body)); got != c.want {
			t.Errorf("%T: %s, want %s", c.body, got, c.want)
		}
	}
}
