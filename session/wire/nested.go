//go:build unix

package wire

import "encoding/json"

// LiftData accepts the fields of a request nested under "data" as well as
// at the top level: {"type":"WAIT","data":{"activity":true}} is
// {"type":"WAIT","activity":true}. Some clients of the protocol (the
// Python implementation among them) nest every request's fields that way,
// as DEBUG's own definition does. A field given in both places keeps its
// top-level value; "type" is never taken from data. INPUT has its own
// rule (LiftInputData): its "data" is the text to type.
func (f Fields) LiftData() error {
	if !f.Has("data") {
		return nil
	}
	var sub Fields
	if err := json.Unmarshal(f["data"], &sub); err != nil || sub == nil {
		return Invalidf("field 'data' must be an object")
	}
	for name, raw := range sub {
		if name == "type" || f.Has(name) {
			continue
		}
		f[name] = raw
	}
	return nil
}

// LiftInputData is LiftData for INPUT, whose top-level "data" is the text
// to type. A "data" that is an object is the nested form instead
// ({"type":"INPUT","data":{"data":"ls\r"}}, as the Python implementation
// sends it): its fields are lifted, its own "data" becoming the text.
func (f Fields) LiftInputData() error {
	raw, ok := f["data"]
	if !ok || !isObject(raw) {
		return nil // the text, or not there: input() says what is wrong
	}
	var sub Fields
	if err := json.Unmarshal(raw, &sub); err != nil {
		return Invalidf("field 'data' must be a string or an object")
	}
	delete(f, "data")
	for name, v := range sub {
		if name == "type" || f.Has(name) {
			continue
		}
		f[name] = v
	}
	return nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// BothForms returns req with its fields at the top level and also nested
// under "data". Daemons of the session protocol differ in where they read
// a request's fields: ours (and the Rust original) at the top level, the
// Python implementation under "data" (as DEBUG's definition has them).
// Sending both works with either; a daemon that reads both (ours: see
// LiftData) takes the top-level value, which is the same. The CLI and the
// MCP server send every request through it. INPUT is left alone: its "data" is
// the text to type.
func BothForms(req map[string]any) map[string]any {
	if req["type"] == "INPUT" {
		return req
	}
	nested := map[string]any{}
	if d, ok := req["data"].(map[string]any); ok {
		for k, v := range d {
			nested[k] = v
		}
	}
	out := map[string]any{}
	for k, v := range req {
		if k == "data" {
			continue
		}
		out[k] = v
		if k != "type" {
			nested[k] = v
		}
	}
	for k, v := range nested {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	if len(nested) > 0 {
		out["data"] = nested
	}
	return out
}
