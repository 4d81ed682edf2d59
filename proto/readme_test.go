package proto

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMEFrameTableUsesWireNames checks that the README's frame table
// names each JSON frame's fields exactly as they travel, so a host author
// can write them from the table.
func TestREADMEFrameTableUsesWireNames(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]any{
		"OPEN": Open{}, "RESIZE": Resize{}, "CLOSE": Close{}, "CREDIT": Credit{},
		"OPENED": Opened{}, "EXIT": Exit{}, "ERROR": Error{},
	}
	entry := regexp.MustCompile("`([A-Z]+)` \\(JSON: ([^)]*)\\)")
	name := regexp.MustCompile("`([^`]+)`")
	seen := map[string]bool{}
	for _, m := range entry.FindAllStringSubmatch(string(b), -1) {
		body, ok := bodies[m[1]]
		if !ok {
			continue
		}
		seen[m[1]] = true
		var listed []string
		for _, n := range name.FindAllStringSubmatch(m[2], -1) {
			listed = append(listed, n[1])
		}
		if want := jsonNames(body); !slices.Equal(listed, want) {
			t.Errorf("README lists %s fields %v; the wire names are %v", m[1], listed, want)
		}
	}
	for frame := range bodies {
		if !seen[frame] {
			t.Errorf("README's frame table has no JSON entry for %s", frame)
		}
	}
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
