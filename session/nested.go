package session

import "encoding/json"

// liftData accepts the fields of a request nested under "data" as well as
// at the top level: {"type":"WAIT","data":{"activity":true}} is
// {"type":"WAIT","activity":true}. Some clients of the protocol (the
// Python implementation among them) nest every request's fields that way,
// as DEBUG's own definition does. A field given in both places keeps its
// top-level value; "type" is never taken from data. INPUT is not lifted:
// its "data" is the text to type.
func (f fields) liftData() error {
	if !f.has("data") {
		return nil
	}
	var sub fields
	if err := json.Unmarshal(f["data"], &sub); err != nil || sub == nil {
		return invalidf("field 'data' must be an object")
	}
	for name, raw := range sub {
		if name == "type" || f.has(name) {
			continue
		}
		f[name] = raw
	}
	return nil
}
