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
