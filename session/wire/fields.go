//go:build unix

package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// RequestError is an error whose text the daemon sends to the client as
// is, as the "error" of its answer.
type RequestError string

func (e RequestError) Error() string { return string(e) }

// Invalidf is the RequestError of a malformed request: "Invalid request: "
// and the formatted reason, the words interminai's clients expect.
func Invalidf(format string, a ...any) error {
	return RequestError("Invalid request: " + fmt.Sprintf(format, a...))
}

// Fields is a decoded request object, read field by field so that a wrong
// type is reported by name.
type Fields map[string]json.RawMessage

// ParseRequest decodes one request line into its fields and its "type";
// every failure is an Invalidf error naming what is wrong.
func ParseRequest(line []byte) (Fields, string, error) {
	var f Fields
	if err := json.Unmarshal(line, &f); err != nil {
		if len(line) == 0 {
			return nil, "", Invalidf("empty request")
		}
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			return nil, "", Invalidf("expected a JSON object")
		}
		return nil, "", Invalidf("%v", err)
	}
	if f == nil {
		return nil, "", Invalidf("expected a JSON object")
	}
	raw, ok := f["type"]
	if !ok || isNull(raw) {
		return nil, "", Invalidf("missing 'type' field")
	}
	var typ string
	if err := json.Unmarshal(raw, &typ); err != nil {
		return nil, "", Invalidf("'type' must be a string")
	}
	return f, typ, nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// Has reports whether the field is present and not null.
func (f Fields) Has(name string) bool {
	raw, ok := f[name]
	return ok && !isNull(raw)
}

// Bool reads a boolean field; absent or null is false.
func (f Fields) Bool(name string) (bool, error) {
	if !f.Has(name) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(f[name], &b); err != nil {
		return false, Invalidf("field '%s' must be a boolean", name)
	}
	return b, nil
}

// Str reads a string field and whether it was given.
func (f Fields) Str(name string) (string, bool, error) {
	if !f.Has(name) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(f[name], &s); err != nil {
		return "", false, Invalidf("field '%s' must be a string", name)
	}
	return s, true, nil
}

// Int reads an integer field and whether it was given.
func (f Fields) Int(name string) (int, bool, error) {
	if !f.Has(name) {
		return 0, false, nil
	}
	var n int
	if err := json.Unmarshal(f[name], &n); err != nil {
		return 0, false, Invalidf("field '%s' must be an integer", name)
	}
	return n, true, nil
}

// Whole reads an integer field given in any JSON spelling of a whole
// number (5000, 5e3, 5000.0), one beyond what an int holds clamped to the
// int range, and whether it was given. It is for values where "that far"
// means the same as the largest (a generation never reached), as
// timeout_ms's are clamped; fractions and strings are refused.
func (f Fields) Whole(name string) (int, bool, error) {
	if !f.Has(name) {
		return 0, false, nil
	}
	var n int
	if err := json.Unmarshal(f[name], &n); err == nil {
		return n, true, nil
	}
	if v, ok := integralNumber(f[name]); ok {
		return v, true, nil
	}
	return 0, false, Invalidf("field '%s' must be an integer", name)
}

// integralNumber reads a JSON number that is a whole number in another
// spelling than a plain int (-1e2, -100.0, what a client's floats give),
// or one beyond what an int holds, clamped to the int range: a line number
// that far is past every line either way, as timeout_ms's are clamped.
func integralNumber(raw json.RawMessage) (int, bool) {
	var num json.Number
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &num) != nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(num.String(), 64)
	if err != nil && !isRange(err) || v != math.Trunc(v) {
		return 0, false
	}
	switch {
	case v >= math.MaxInt:
		return math.MaxInt, true
	case v <= math.MinInt:
		return math.MinInt, true
	}
	return int(v), true
}

// LineNumber reads an OUTPUT range bound: an integer in any JSON spelling
// of one, a numeric string, or (when oldestOK) "-" for the oldest
// scrollback line.
func (f Fields) LineNumber(name string, oldestOK bool) (n int, set, oldest bool, err error) {
	if !f.Has(name) {
		return 0, false, false, nil
	}
	if err := json.Unmarshal(f[name], &n); err == nil {
		return n, true, false, nil
	}
	if v, ok := integralNumber(f[name]); ok {
		return v, true, false, nil
	}
	var s string
	if err := json.Unmarshal(f[name], &s); err == nil {
		if s == "-" && oldestOK {
			return 0, true, true, nil
		}
		if v, err := strconv.Atoi(s); err == nil {
			return v, true, false, nil
		}
	}
	if oldestOK {
		return 0, false, false, Invalidf("field '%s' must be an integer or \"-\"", name)
	}
	return 0, false, false, Invalidf("field '%s' must be an integer", name)
}
