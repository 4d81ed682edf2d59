package main

// bothForms returns req with its fields at the top level and also nested
// under "data". Daemons of the session protocol differ in where they read
// a request's fields: ours (and the Rust original) at the top level, the
// Python implementation under "data" (as DEBUG's definition has them).
// Sending both works with either; a daemon that reads both takes the
// top-level value, which is the same. INPUT is left alone: its "data" is
// the text to type.
func bothForms(req map[string]any) map[string]any {
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
