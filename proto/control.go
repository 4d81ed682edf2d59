package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Open is the body of an OPEN frame.
type Open struct {
	TerminalID string            `json:"terminalId"`
	Cols       uint16            `json:"cols"`
	Rows       uint16            `json:"rows"`
	Cmd        string            `json:"cmd"`
	Args       []string          `json:"args,omitempty"`
	Cwd        *string           `json:"cwd,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	// EnvOrder lists Env's names in the order the body sent them (each
	// at its last appearance), set by ParseOpen only when two of them are
	// equal without regard to case: one variable on Windows, where the
	// later one sent wins (see PROTOCOL.md). Never sent.
	EnvOrder []string `json:"-"`
	// Credit is the initial read budget in bytes; nil means unthrottled.
	Credit *uint64 `json:"credit,omitempty"`
	// UTF8 (extension) asks for IUTF8 on the terminal (see PROTOCOL.md).
	UTF8 bool `json:"utf8,omitempty"`
	// NodePtyTermios (extension) asks for node-pty's terminal attributes
	// instead of the kernel's defaults (see PROTOCOL.md).
	NodePtyTermios bool `json:"nodePtyTermios,omitempty"`
	// CommandLine (extension, Windows only) is the child's command line
	// after the program, taken as it is, in place of Args: cmd.exe does
	// not split its line by the rules Args are quoted for, so a command
	// for cmd /c that holds quotes can only be given this way (node-pty's
	// args as a string). Empty is the same as absent.
	CommandLine string `json:"commandLine,omitempty"`
}

// Resize is the body of a RESIZE frame.
type Resize struct {
	TerminalID string `json:"terminalId"`
	Cols       uint16 `json:"cols"`
	Rows       uint16 `json:"rows"`
	// PixelWidth and PixelHeight (extension) are the window's size in
	// pixels, the winsize's ws_xpixel and ws_ypixel (node-pty's
	// pixelSize); 0 when absent (see PROTOCOL.md).
	PixelWidth  uint16 `json:"pixelWidth,omitempty"`
	PixelHeight uint16 `json:"pixelHeight,omitempty"`
}

// Close is the body of a CLOSE frame.
type Close struct {
	TerminalID string `json:"terminalId"`
}

// Credit is the body of a CREDIT frame.
type Credit struct {
	TerminalID string `json:"terminalId"`
	Bytes      uint64 `json:"bytes"`
}

// The bodies the sidecar writes (Opened, Exit, Error, ForegroundInfo)
// declare their fields in the order of their JSON names, so that they go
// out with sorted keys, as the reference sidecar's serde_json writes them:
// a host comparing bodies byte for byte sees the same bytes.

// Opened is the body of an OPENED frame.
type Opened struct {
	// Features lists the frame types beyond the seed protocol that this
	// sidecar serves (FeatureSignal, ...); our addition.
	Features []string `json:"features,omitempty"`
	// HoldGen is set by the persistent server only: the holder
	// generation the OPEN's connection holds the terminal at (see
	// Attached.HoldGen); absent from the plain sidecar's OPENED, whose
	// bytes stay the seed's.
	HoldGen uint64 `json:"holdGen,omitempty"`
	PID     int    `json:"pid"`
	// Readopted says the persistent server gave this OPEN a terminal
	// that was already running under its id (see FeatureReadopt); our
	// addition, absent otherwise.
	Readopted  bool   `json:"readopted,omitempty"`
	TerminalID string `json:"terminalId"`
}

// Exit is the body of an EXIT frame. ExitCode is nil when the status could
// not be collected. Signal names the signal that killed the child, if one
// did; it is our addition and receivers that do not know it ignore it.
type Exit struct {
	// Dead (persistent server, --journal-dir) ends the replay of a
	// terminal whose server died: the bytes before it are all that was
	// kept, and exitCode is null unless its exit had been recorded.
	Dead       bool   `json:"dead,omitempty"`
	ExitCode   *int   `json:"exitCode"`
	Signal     string `json:"signal,omitempty"`
	TerminalID string `json:"terminalId"`
}

// Error is the body of an ERROR frame.
type Error struct {
	Message    string `json:"message"`
	TerminalID string `json:"terminalId"`
}

// MaxErrorMessage bounds an ERROR's message in bytes. Messages quote what
// the host sent (a command, a directory, a field's JSON), which can be
// megabytes: an ERROR must still fit in a frame, or a host following the
// seed takes the stream for corrupt and loses every terminal.
const MaxErrorMessage = 16 << 10

// MarshalJSON encodes e as it is, keys in this order, but with the message
// cut to about MaxErrorMessage bytes; an id too long for the frame even so (one
// of megabytes, which no terminal can have) is cut to MaxID bytes.
func (e Error) MarshalJSON() ([]byte, error) {
	type plain Error
	p := plain{Message: cutString(e.Message, MaxErrorMessage), TerminalID: e.TerminalID}
	b, err := marshalPlain(p)
	if err == nil && 1+len(b) > MaxFrame {
		p.TerminalID = cutString(p.TerminalID, MaxID)
		b, err = marshalPlain(p)
	}
	return b, err
}

// marshalPlain is Marshal's encoding, with its error.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// cutString cuts s to about n bytes (the note included) at a character
// boundary, saying how much was left out when it cuts.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	note := fmt.Sprintf(" ... (%d bytes more)", len(s)-n)
	end := max(n-len(note), 0)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + fmt.Sprintf(" ... (%d bytes more)", len(s)-end)
}

// Marshal encodes a control body as compact JSON. The control types above
// cannot fail to encode, so a failure here is a programming error.
//
// Strings go out as they are, without encoding/json's escaping of <, > and
// & for HTML: the bytes a host compares are then the ones any other JSON
// encoder writes.
func Marshal(v any) []byte {
	b, err := marshalPlain(v)
	if err != nil {
		panic(fmt.Sprintf("proto: encoding %T: %v", v, err))
	}
	return b
}

// openWire mirrors Open with every field optional so that missing and
// mistyped fields can be told apart and reported by name. Args and Env
// hold pointers so that a null among their strings is seen: JSON decodes
// it into a string as "", an argument or a value nobody sent.
type openWire struct {
	TerminalID *string            `json:"terminalId"`
	Cols       json.RawMessage    `json:"cols"`
	Rows       json.RawMessage    `json:"rows"`
	Cmd        *string            `json:"cmd"`
	Args       []*string          `json:"args"`
	Cwd        *string            `json:"cwd"`
	Env        map[string]*string `json:"env"`
	UTF8       *bool              `json:"utf8"`
	NodePty    *bool              `json:"nodePtyTermios"`
	Credit     json.RawMessage    `json:"credit"`
	CmdLine    *string            `json:"commandLine"`
	// The persistent server's fields, kept raw for OpenRequest.Persist:
	// the plain sidecar ignores them, so they must never fail ParseOpen.
	Journal  json.RawMessage `json:"journal"`
	Detached json.RawMessage `json:"detached"`
	Orphan   json.RawMessage `json:"orphanMs"`
}

// ParseOpen decodes and validates an OPEN body. When the body is malformed
// it still returns the terminal id if one could be recovered (so the caller
// can answer with an ERROR frame for it), together with a non-nil error.
func ParseOpen(body []byte) (Open, error) {
	var w openWire
	return parseOpen(body, &w)
}

// parseOpen is ParseOpen leaving the raw body in w, for Decode.
func parseOpen(body []byte, w *openWire) (Open, error) {
	dec := json.NewDecoder(bytes.NewReader(exactKeys(body, w)))
	if err := dec.Decode(w); err != nil {
		return Open{TerminalID: RecoverID(body)}, fmt.Errorf("malformed OPEN: %w", wireTypeError(err))
	}
	if dec.More() {
		return Open{TerminalID: RecoverID(body)}, errors.New("malformed OPEN: trailing data after the JSON object")
	}
	if w.TerminalID == nil {
		return Open{}, errors.New("malformed OPEN: missing terminalId")
	}
	o := Open{TerminalID: *w.TerminalID, Cwd: w.Cwd}
	if err := CheckID(o.TerminalID); err != nil {
		return o, fmt.Errorf("malformed OPEN: %w", err)
	}
	if err := checkSentIDs(body); err != nil {
		// Refused under the id as decoded (U+FFFD for what was bad):
		// the only string JSON can carry back.
		return o, fmt.Errorf("malformed OPEN: %w", err)
	}
	var err error
	if o.Cols, err = u16Field("OPEN", "cols", w.Cols); err != nil {
		return o, err
	}
	if o.Rows, err = u16Field("OPEN", "rows", w.Rows); err != nil {
		return o, err
	}
	if w.Cmd == nil {
		return o, errors.New("malformed OPEN: missing cmd")
	}
	if *w.Cmd == "" {
		return o, errors.New("malformed OPEN: cmd is empty")
	}
	o.Cmd = *w.Cmd
	if err := o.setArgsEnv(body, w); err != nil {
		return o, fmt.Errorf("malformed OPEN: %w", err)
	}
	if w.CmdLine != nil {
		o.CommandLine = *w.CmdLine
		if o.CommandLine != "" && len(o.Args) > 0 {
			return o, errors.New("malformed OPEN: commandLine and args cannot both be given")
		}
	}
	if err := checkLaunch(o); err != nil {
		return o, fmt.Errorf("malformed OPEN: %w", err)
	}
	if err := checkSentLaunch(body); err != nil {
		return o, fmt.Errorf("malformed OPEN: %w", err)
	}
	if err := checkCommandLine(o); err != nil {
		return o, err
	}
	o.UTF8 = w.UTF8 != nil && *w.UTF8
	o.NodePtyTermios = w.NodePty != nil && *w.NodePty
	if len(w.Credit) > 0 && string(w.Credit) != "null" {
		c, err := parseUint(w.Credit, math.MaxUint64)
		if err != nil {
			return o, fmt.Errorf("malformed OPEN: credit: %w", err)
		}
		o.Credit = &c
	}
	return o, nil
}

// errCommandLineUnix refuses commandLine where there is no command line
// to give: a Unix child gets an argument vector, which args already is.
var errCommandLineUnix = errors.New("commandLine is only for Windows: give args")

// checkCommandLine refuses o's commandLine on a system that starts
// programs with an argument vector. Beside args it was refused earlier,
// as malformed (which of the two would the child get?), and its NUL and
// UTF-8 checks are the other launch strings'.
func checkCommandLine(o Open) error {
	if o.CommandLine != "" && runtime.GOOS != "windows" {
		return errCommandLineUnix
	}
	return nil
}

// setArgsEnv copies w's args and env into o, refusing a null among them:
// they are an array of strings and an object of strings, and a null is no
// string (a decoder with those types, as the seed sidecar's, refuses it).
func (o *Open) setArgsEnv(body []byte, w *openWire) error {
	if w.Args != nil {
		o.Args = make([]string, len(w.Args))
		for i, a := range w.Args {
			if a == nil {
				return fmt.Errorf("args[%d] is null, not a string", i)
			}
			o.Args[i] = *a
		}
	}
	if w.Env != nil {
		o.Env = make(map[string]string, len(w.Env))
		nulls := []string{}
		for k, v := range w.Env {
			if v == nil {
				nulls = append(nulls, k)
				continue
			}
			o.Env[k] = *v
		}
		if len(nulls) > 0 {
			sort.Strings(nulls) // the same complaint for the same body
			return fmt.Errorf("env: the value of %q is null, not a string", nulls[0])
		}
	}
	o.EnvOrder = envOrder(body, o.Env)
	return nil
}

// envOrder is the names of env in the order body's "env" objects send
// them, each at its last appearance, when two of them are equal without
// regard to case; nil otherwise (the order then changes nothing).
func envOrder(body []byte, env map[string]string) []string {
	if len(env) < 2 {
		return nil
	}
	folded := make(map[string]bool, len(env))
	clash := false
	for k := range env {
		f := strings.ToUpper(k)
		if folded[f] {
			clash = true
			break
		}
		folded[f] = true
	}
	if !clash {
		return nil
	}
	keys, ok := topKeys(body)
	if !ok {
		return nil
	}
	var sent []string
	for _, k := range keys {
		if k.name != "env" {
			continue
		}
		inner, ok := topKeys(k.value)
		if !ok {
			continue
		}
		for _, e := range inner {
			sent = append(sent, e.name)
		}
	}
	last := make(map[string]int, len(sent))
	for i, n := range sent {
		last[n] = i
	}
	var order []string
	for i, n := range sent {
		if _, ok := env[n]; ok && last[n] == i {
			order = append(order, n)
		}
	}
	return order
}

func u16Field(frame, name string, raw json.RawMessage) (uint16, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, fmt.Errorf("malformed %s: missing %s", frame, name)
	}
	v, err := parseUint(raw, math.MaxUint16)
	if err != nil {
		return 0, fmt.Errorf("malformed %s: %s: %w", frame, name, err)
	}
	return uint16(v), nil
}

// wireTypeError words encoding/json's complaint about a value of the
// wrong JSON type in the protocol's terms: "json: cannot unmarshal number
// into Go struct field openWire.cmd of type string" becomes "cmd is a
// number, not a string". The text reaches the host in an ERROR, and the
// Go names in it (openWire, []*string) are ours, not the host's. Other
// errors are returned as they are.
func wireTypeError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return err
	}
	got, _, _ := strings.Cut(te.Value, " ") // "number 5": the kind is enough
	if te.Field == "" {
		return fmt.Errorf("the body is %s, not a JSON object", jsonArticle(got))
	}
	field := te.Field
	switch want := jsonWant(te.Type); {
	case want == "a string" && field == "args":
		return fmt.Errorf("args holds %s, not only strings", jsonArticle(got))
	case want == "a string" && field == "env":
		return fmt.Errorf("env has %s among its values, not only strings", jsonArticle(got))
	default:
		return fmt.Errorf("%s is %s, not %s", field, jsonArticle(got), want)
	}
}

// jsonArticle names a JSON kind as encoding/json reports it ("number",
// "array", "bool") with its article.
func jsonArticle(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// jsonWant says what JSON a field of Go type t takes.
func jsonWant(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array of strings"
	case reflect.Map:
		return "an object of strings"
	case reflect.Struct:
		return "a JSON object"
	}
	return "a number"
}

// parseUint accepts a JSON value that is a whole number in 0..max.
func parseUint(n json.RawMessage, max uint64) (uint64, error) {
	v, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number in 0..%d", n, max)
	}
	if v > max {
		return 0, fmt.Errorf("%s is larger than %d", n, max)
	}
	return v, nil
}

// RecoverID scans a possibly malformed JSON object for a top-level
// "terminalId" string and returns it, or "" when there is none to find or it
// is not a valid id (CheckID). It reads tokens until the first syntax error,
// so it also works on bodies that are truncated or broken after the id.
func RecoverID(body []byte) string {
	if id, ok := SentID(body); ok && CheckID(id) == nil {
		return id
	}
	return ""
}

// SentID is RecoverID without the validity check: the top-level
// "terminalId" as the sender wrote it, empty or over-long included, and
// whether there was one. A refusal of a frame whose id is itself invalid
// can still be addressed to what the host sent.
func SentID(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for {
		key, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, ok := key.(string)
		if !ok {
			return "", false // end of object
		}
		if k == "terminalId" {
			v, err := dec.Token()
			s, ok := v.(string)
			return s, err == nil && ok
		}
		// Skip the value, which may be a nested array or object.
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
}

// ParseResize decodes a RESIZE body.
//
// Both sizes are required and must be whole numbers in 0..65535, as for
// OPEN: a RESIZE without rows is a mistake of the host's, and taking the
// missing field as 0 would shrink the terminal to one row. The pixel
// sizes are optional (absent or null: 0), and whole numbers in 0..65535
// when given.
func ParseResize(body []byte) (Resize, error) {
	var w struct {
		TerminalID  string          `json:"terminalId"`
		Cols        json.RawMessage `json:"cols"`
		Rows        json.RawMessage `json:"rows"`
		PixelWidth  json.RawMessage `json:"pixelWidth"`
		PixelHeight json.RawMessage `json:"pixelHeight"`
	}
	if err := unmarshalExact(body, &w); err != nil {
		return Resize{}, fmt.Errorf("malformed RESIZE: %w", err)
	}
	r := Resize{TerminalID: w.TerminalID}
	var err error
	if r.Cols, err = u16Field("RESIZE", "cols", w.Cols); err != nil {
		return r, err
	}
	if r.Rows, err = u16Field("RESIZE", "rows", w.Rows); err != nil {
		return r, err
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   *uint16
	}{{"pixelWidth", w.PixelWidth, &r.PixelWidth}, {"pixelHeight", w.PixelHeight, &r.PixelHeight}} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		if *f.to, err = u16Field("RESIZE", f.name, f.raw); err != nil {
			return r, err
		}
	}
	return r, nil
}

// ParseClose decodes a CLOSE body.
func ParseClose(body []byte) (Close, error) {
	var c Close
	if err := unmarshalExact(body, &c); err != nil {
		return c, fmt.Errorf("malformed CLOSE: %w", err)
	}
	return c, nil
}

// ParseCredit decodes a CREDIT body.
func ParseCredit(body []byte) (Credit, error) {
	var c Credit
	if err := unmarshalExact(body, &c); err != nil {
		return c, fmt.Errorf("malformed CREDIT: %w", err)
	}
	return c, nil
}

// OpenErrorID is the id a refused OPEN is answered under: the id ParseOpen
// read, or, for one that is present but invalid (empty, too long), the id
// as sent, as the reference sidecar does. ok is false only for a body with
// no id string at all, which cannot be answered.
func OpenErrorID(o Open, body []byte) (id string, ok bool) {
	if o.TerminalID != "" {
		return o.TerminalID, true
	}
	return SentID(body)
}
