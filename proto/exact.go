package proto

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// The protocol's JSON keys are camelCase and mean what they say, but
// encoding/json gives a key to a struct field whose name matches it in any
// case: it would take "CMD" for "cmd", and of "terminalId" and
// "terminalid" in one body the later would win, so that a host's OPEN of
// one id would open another. Bodies from a host are therefore decoded with
// every top-level key that names a field only case-insensitively taken
// out first: to the protocol it is an unknown key, and ignored as one.

// unmarshalExact is json.Unmarshal(body, v), v a pointer to a struct, with
// its keys matched exactly.
func unmarshalExact(body []byte, v any) error {
	return wireTypeError(json.Unmarshal(exactKeys(body, v), v))
}

// DecodeBody is json.Unmarshal of a frame's JSON body into v, with a
// value of the wrong JSON type reported in the protocol's words ("the body
// is an array, not a JSON object", "exitCode is a string, not a number"),
// not encoding/json's, which name this package's Go types. For a host
// decoding a server's frames: the message reaches its user.
func DecodeBody(body []byte, v any) error { return wireTypeError(json.Unmarshal(body, v)) }

// exactKeys returns body without the top-level keys that only a
// case-insensitive match would give to a field of the struct v points to.
// It returns body itself when there are none (the usual case), and when
// body is no single JSON object, so that decoding it reports what is wrong
// as before.
func exactKeys(body []byte, v any) []byte {
	names := fieldNames(reflect.TypeOf(v).Elem())
	keys, ok := topKeys(body)
	if !ok {
		return body
	}
	drop := false
	for _, k := range keys {
		if inexact(names, k.name) {
			drop = true
			break
		}
	}
	if !drop {
		return body
	}
	out := []byte{'{'}
	for _, k := range keys {
		if inexact(names, k.name) {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(k.name)
		out = append(append(append(out, name...), ':'), k.value...)
	}
	return append(out, '}')
}

// inexact says key names no field exactly but one in another case.
func inexact(names map[string]bool, key string) bool {
	if names[key] {
		return false
	}
	for n := range names {
		if strings.EqualFold(n, key) {
			return true
		}
	}
	return false
}

type keyValue struct {
	name  string
	value json.RawMessage
}

// topKeys lists the keys and raw values of the JSON object that is body;
// ok is false if body is anything else (or more than one value).
func topKeys(body []byte) (keys []keyValue, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, isKey := t.(string)
		var value json.RawMessage
		if !isKey || dec.Decode(&value) != nil {
			return nil, false
		}
		keys = append(keys, keyValue{name, value})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return nil, false // trailing data: the decoder says so
	}
	return keys, true
}

// fieldNames are the JSON names of t's fields, computed once per type.
func fieldNames(t reflect.Type) map[string]bool {
	if m, ok := fieldNameCache.Load(t); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		m[name] = true
	}
	fieldNameCache.Store(t, m)
	return m
}

var fieldNameCache sync.Map // reflect.Type → map[string]bool
