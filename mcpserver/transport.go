//go:build unix

package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio connection ends the whole connection (and so the server
// and every session it started) on the first line it cannot decode, reads
// ids as float64 (large integer ids come back changed) and passes a null id
// through as a notification. lineTransport stands in for it on the same
// stdin/stdout: it splits the input on newlines, answers every line that is
// not a JSON-RPC message with the error JSON-RPC 2.0 names (-32700 for
// invalid JSON, -32600 for anything else, with the id when it can be read
// and null otherwise), and keeps serving. The SDK sees every request under
// an id of ours; the response goes out under the client's id, byte for
// byte as the client wrote it.

// maxLineLength bounds one input line: a longer one is answered with an
// error and skipped without being held in memory. The SDK's own limit.
const maxLineLength = mcp.DefaultMaxLineLength

// lineTransport is newline-delimited JSON-RPC over r and w.
type lineTransport struct {
	r       io.ReadCloser
	w       io.Writer
	wc      io.Closer // closed with the connection; nil for stdout
	maxLine int       // 0 or less: maxLineLength
	log     *slog.Logger
}

// Connect implements mcp.Transport. When ctx (Server.Run's) ends, the
// input ends as at end of file: the SDK then cancels the calls in
// progress at once, instead of waiting for them (a wait can last ten
// minutes) before Run returns and stops the sessions.
func (t *lineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	max := t.maxLine
	if max <= 0 {
		max = maxLineLength
	}
	c := &lineConn{
		r: t.r, w: t.w, wc: t.wc, maxLine: max, log: t.log, stop: ctx.Done(),
		lines:    make(chan inLine),
		closed:   make(chan struct{}),
		inflight: map[int64]*pending{},
		byKey:    map[string]int64{},
	}
	go c.readLines()
	return c, nil
}

// inLine is one input line (without its newline) or the error that ended
// the input.
type inLine struct {
	data    []byte
	tooLong bool // over maxLine: its bytes were dropped
	err     error
}

// pending is a request handed to the SDK whose response has not gone out.
type pending struct {
	id     json.RawMessage // the id as the client wrote it
	key    string          // the id's identity, for duplicates and cancellation
	method string
	b      *batch // the batch it came in, if any
	slot   int    // its answer's place in b
	// cancelled: the client cancelled the request, so its response is
	// not sent (MCP: the client no longer waits for it, and one that
	// comes anyway is an error to it).
	cancelled bool
}

// batch collects the answers to the requests of one JSON-RPC batch: they
// go out together, as one array, once the last is in (JSON-RPC 2.0
// section 6). Guarded by lineConn.mu.
type batch struct {
	answers [][]byte // in the order of the batch's requests
	waiting int      // answers still to come from the SDK
	sealed  bool     // every member has been read
}

// done returns the batch's answer line once it is complete; nil before,
// and when there is nothing to answer (the batch held notifications only).
func (b *batch) done() []byte {
	if !b.sealed || b.waiting > 0 {
		return nil
	}
	var out [][]byte
	for _, a := range b.answers {
		if a != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']')
}

// lineConn is a connection of lineTransport.
type lineConn struct {
	r       io.ReadCloser
	w       io.Writer
	wc      io.Closer
	maxLine int
	log     *slog.Logger

	stop      <-chan struct{} // the input ends now: the server is told to stop
	lines     chan inLine
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error

	// queue holds messages decoded but not yet returned by Read (Read is
	// never called concurrently).
	queue []jsonrpc.Message

	writeMu sync.Mutex // one line at a time on w

	mu       sync.Mutex
	next     int64              // the last id given to the SDK
	inflight map[int64]*pending // by the id the SDK sees
	byKey    map[string]int64   // the client's ids in flight
	version  string             // the protocol version initialize agreed on
}

// SessionID implements mcp.Connection: stdio has no session id.
func (c *lineConn) SessionID() string { return "" }

// Close implements mcp.Connection.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.r.Close()
		if c.wc != nil {
			c.closeErr = errors.Join(c.closeErr, c.wc.Close())
		}
	})
	return c.closeErr
}

// readLines splits the input into lines for Read. A line over maxLine is
// reported as too long once its end is reached; its bytes are not kept.
func (c *lineConn) readLines() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	var line []byte
	over := false
	for {
		frag, err := br.ReadSlice('\n')
		if !over {
			n := len(line) + len(frag)
			if bytes.HasSuffix(frag, []byte{'\n'}) {
				n--
			}
			if n > c.maxLine {
				over, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 || over {
			if !c.deliver(inLine{data: line, tooLong: over}) {
				return
			}
		}
		line, over = nil, false
		if err != nil {
			c.deliver(inLine{err: err})
			return
		}
	}
}

func (c *lineConn) deliver(l inLine) bool {
	select {
	case c.lines <- l:
		return true
	case <-c.closed:
		return false
	}
}

// Read implements mcp.Connection. Lines that carry no message for the SDK
// (blank ones, and those answered here with an error) are consumed without
// returning.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for len(c.queue) == 0 {
		var l inLine
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-c.stop:
			return nil, io.EOF
		case l = <-c.lines:
		}
		if l.err != nil {
			return nil, l.err
		}
		if err := c.decodeLine(l); err != nil {
			return nil, err // the output is broken: nothing more can be answered
		}
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	return msg, nil
}

// JSON-RPC 2.0 error codes for input that is not a request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

var nullID = json.RawMessage("null")

// decodeLine queues the message of one line, or answers it with an error.
// The error returned is a failure to write.
func (c *lineConn) decodeLine(l inLine) error {
	if l.tooLong {
		return c.reject(nullID, codeInvalidRequest, fmt.Sprintf("invalid request: line longer than %d bytes, discarded", c.maxLine), nil)
	}
	data := bytes.TrimSpace(l.data)
	if len(data) == 0 {
		return nil // a blank line is no message
	}
	if !json.Valid(data) {
		return c.reject(nullID, codeParseError, "parse error: the line is not valid JSON", data)
	}
	if data[0] == '[' {
		return c.decodeBatch(data)
	}
	msg, bad := c.decode(data, nil)
	if bad != nil {
		return c.reject(bad.id, bad.code, bad.msg, data)
	}
	if msg != nil {
		c.queue = append(c.queue, msg)
	}
	return nil
}

// batchesUntil is the first protocol version without JSON-RPC batches
// (2025-03-26 requires receiving them; 2025-06-18 removed them).
const batchesUntil = "2025-06-18"

// decodeBatch queues the members of a batch. Each member that is not a
// valid message gets its error in the batch's answer; an empty batch, or
// one under a protocol version without batches, gets a single error.
func (c *lineConn) decodeBatch(data []byte) error {
	var members []json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || len(members) == 0 {
		return c.reject(nullID, codeInvalidRequest, "invalid request: empty batch", data)
	}
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version == "" || version >= batchesUntil {
		why := "before initialize"
		if version != "" {
			why = "in protocol version " + version
		}
		return c.reject(nullID, codeInvalidRequest, "invalid request: JSON-RPC batches are not accepted "+why+": send one message per line", data)
	}
	b := &batch{}
	for _, m := range members {
		msg, bad := c.decode(m, b)
		if bad != nil {
			c.log.Warn("refused a batch member", "code", bad.code, "error", bad.msg, "member", excerpt(m))
			c.mu.Lock()
			b.answers = append(b.answers, errorResponse(bad.id, bad.code, bad.msg))
			c.mu.Unlock()
		}
		if msg != nil {
			c.queue = append(c.queue, msg)
		}
	}
	c.mu.Lock()
	b.sealed = true
	out := b.done()
	c.mu.Unlock()
	if out != nil { // nothing for the SDK to answer: errors, notifications
		return c.writeLine(out)
	}
	return nil
}

// badMessage is why a message is refused, and the id to answer it with.
type badMessage struct {
	id   json.RawMessage
	code int64
	msg  string
}

// decode reads one JSON value (valid JSON) as a JSON-RPC message, a member
// of b if b is not nil. It returns the message for the SDK (nil for a
// response nobody waits for), or why it is refused.
func (c *lineConn) decode(raw []byte, b *batch) (jsonrpc.Message, *badMessage) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return nil, &badMessage{nullID, codeInvalidRequest, "invalid request: a JSON-RPC message is a JSON object"}
	}
	idRaw, hasID := f["id"]
	var key string
	var idErr error
	if hasID {
		key, idErr = idKey(idRaw)
	}
	replyID := nullID
	if hasID && idErr == nil {
		replyID = idRaw
	}
	bad := func(msg string) (jsonrpc.Message, *badMessage) {
		return nil, &badMessage{replyID, codeInvalidRequest, "invalid request: " + msg}
	}
	var version string
	if json.Unmarshal(f["jsonrpc"], &version) != nil || version != "2.0" {
		return bad(`"jsonrpc" must be "2.0"`)
	}
	if idErr != nil {
		return bad(idErr.Error())
	}
	methodRaw, hasMethod := f["method"]
	if !hasMethod {
		_, hasResult := f["result"]
		_, hasError := f["error"]
		if !hasResult && !hasError {
			return bad(`a request needs "method" (a response, "result" or "error")`)
		}
		return c.response(f, idRaw, hasID), nil
	}
	var method string
	if json.Unmarshal(methodRaw, &method) != nil {
		return bad(`"method" must be a string`)
	}
	params := f["params"]
	if !hasID {
		if method == cancelledMethod {
			return c.cancelled(params), nil
		}
		return &jsonrpc.Request{Method: method, Params: params}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.byKey[key]; dup {
		return bad("id " + string(idRaw) + " is already used by a request in progress")
	}
	c.next++
	p := &pending{id: idRaw, key: key, method: method, b: b}
	if b != nil {
		p.slot = len(b.answers)
		b.answers = append(b.answers, nil)
		b.waiting++
	}
	c.inflight[c.next] = p
	c.byKey[key] = c.next
	return &jsonrpc.Request{ID: sdkID(c.next), Method: method, Params: params}, nil
}

// sdkID is the SDK's integer id n. The jsonrpc package builds integer ids
// from float64 only; the ids given here stay far below 2^53.
func sdkID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// idKey checks a request id (MCP: a string or an integer, never null) and
// returns its identity: the string, or the integer's decimal digits, so
// that 1, 1.0 and 1e0 are one id.
func idKey(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errors.New("unreadable id")
		}
		return "s" + s, nil
	case 'n':
		return "", errors.New("the id must not be null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n, ok := integer(string(raw)); ok {
			return "n" + n, nil
		}
		return "", errors.New("the id must be a string or an integer, not " + string(raw))
	}
	return "", errors.New("the id must be a string or an integer")
}

// integer returns the decimal digits of a JSON number that is an integer,
// of any size. Fractions and exponents are read only when the number is
// short and its exponent small, so no text makes it compute a huge power.
func integer(num string) (string, bool) {
	if !strings.ContainsAny(num, ".eE") {
		if num == "-0" {
			return "0", true
		}
		return num, true // JSON integers have no leading zeros: the text is canonical
	}
	if len(num) > 100 {
		return "", false
	}
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		exp, err := strconv.Atoi(num[i+1:])
		if err != nil || exp > 1000 || exp < -1000 {
			return "", false
		}
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok || !r.IsInt() {
		return "", false
	}
	return r.Num().String(), true
}

// response turns a client's response to a request of the server's into
// the SDK's form. The server's own ids are integers; any other id answers
// nothing the server asked, and the response is dropped (nil).
func (c *lineConn) response(f map[string]json.RawMessage, idRaw json.RawMessage, hasID bool) jsonrpc.Message {
	if !hasID {
		return nil
	}
	var n int64
	if json.Unmarshal(idRaw, &n) != nil {
		c.log.Info("dropped a response to no request of ours", "id", string(idRaw))
		return nil
	}
	resp := &jsonrpc.Response{ID: sdkID(n), Result: f["result"]}
	if e, ok := f["error"]; ok {
		we := &jsonrpc.Error{}
		if json.Unmarshal(e, we) != nil {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "malformed error in the client's response: " + string(e)}
		}
		resp.Error = we
	}
	return resp
}

const cancelledMethod = "notifications/cancelled"

// cancelled passes a cancellation to the SDK under the id the SDK knows
// the request by, and marks the request so its response is dropped. One
// for no request in progress (answered already, or never sent) cancels
// nothing and is dropped.
func (c *lineConn) cancelled(params json.RawMessage) jsonrpc.Message {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil || p["requestId"] == nil {
		c.log.Info("dropped a malformed cancellation", "params", string(params))
		return nil
	}
	key, err := idKey(p["requestId"])
	if err != nil {
		return nil
	}
	c.mu.Lock()
	n, ok := c.byKey[key]
	if ok && c.inflight[n].method == "initialize" {
		ok = false // MCP: initialize is never cancelled, and its answer is awaited
	}
	if ok {
		c.inflight[n].cancelled = true
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	p["requestId"] = json.RawMessage(strconv.FormatInt(n, 10))
	b, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return &jsonrpc.Request{Method: cancelledMethod, Params: b}
}

// Write implements mcp.Connection. A response goes out under the id the
// client gave its request, or into its batch's answer.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.writeLine(data)
	}
	n, ok := resp.ID.Raw().(int64)
	c.mu.Lock()
	p := c.inflight[n]
	if !ok || p == nil {
		c.mu.Unlock()
		return c.writeLine(data) // not a request of the client's: as the SDK made it
	}
	delete(c.inflight, n)
	delete(c.byKey, p.key)
	if p.method == "initialize" && resp.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			c.version = r.ProtocolVersion
		}
	}
	out, err := withID(data, n, p.id)
	if p.cancelled {
		c.log.Info("dropped the response to a cancelled request", "id", string(p.id))
		out, err = nil, nil
	}
	if p.b != nil {
		p.b.answers[p.slot] = out
		p.b.waiting--
		out = p.b.done()
	}
	c.mu.Unlock()
	if err != nil || out == nil {
		return err
	}
	return c.writeLine(out)
}

// withID replaces the SDK's integer id n at the head of an encoded
// response by the client's id.
func withID(data []byte, n int64, id json.RawMessage) ([]byte, error) {
	head := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(n, 10)
	if rest, ok := bytes.CutPrefix(data, []byte(head)); ok && len(rest) > 0 && (rest[0] == ',' || rest[0] == '}') {
		out := make([]byte, 0, len(data)+len(id))
		out = append(out, `{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		return append(out, rest...), nil
	}
	// Another field order than the SDK's today: rebuild the object.
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("re-encoding a response: %w", err)
	}
	f["id"] = id
	return json.Marshal(f)
}

// reject answers a message that is not a valid request with a JSON-RPC
// error under id (null when the id cannot be read), and logs it.
func (c *lineConn) reject(id json.RawMessage, code int64, msg string, line []byte) error {
	c.log.Warn("refused an input line", "code", code, "error", msg, "line", excerpt(line))
	return c.writeLine(errorResponse(id, code, msg))
}

func errorResponse(id json.RawMessage, code int64, msg string) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	if err != nil { // id is valid JSON, so this cannot happen
		panic(err)
	}
	return b
}

// excerpt shortens a line for the log.
func excerpt(line []byte) string {
	const max = 200
	if len(line) > max {
		return string(line[:max]) + "..."
	}
	return string(line)
}

// writeLine writes one message and its newline.
func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	buf := make([]byte, 0, len(data)+1)
	buf = append(append(buf, data...), '\n')
	_, err := c.w.Write(buf)
	return err
}
