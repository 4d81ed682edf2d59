//go:build unix

package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/session/wire"
)

// rawServer is `ptyplex mcp` driven line by line: what the SDK's client
// never sends (malformed lines, odd ids, batches).
type rawServer struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // the server's stdout, line by line; closed at its end
}

// startRaw starts `ptyplex mcp` (with extra arguments) and, unless version
// is "", initializes the session with that protocol version.
func startRaw(t *testing.T, version string, args ...string) *rawServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), wire.RuntimeDirEnv+"="+t.TempDir())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawServer{t: t, cmd: cmd, in: in, lines: make(chan string, 64)}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(deadline):
			cmd.Process.Kill()
			<-done
			t.Errorf("ptyplex mcp did not exit after stdin closed")
		}
	})
	if version != "" {
		r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		if got := r.recv(); !strings.Contains(got, `"protocolVersion":"`+version+`"`) {
			t.Fatalf("initialize: %s", got)
		}
		r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	return r
}

// send writes one line (a newline is added).
func (r *rawServer) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("writing to the server: %v", err)
	}
}

// recv returns the next line of output; the server ending or staying
// silent until the deadline fails the test.
func (r *rawServer) recv() string {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("the server ended its output (exit: %v)", r.wait())
		}
		return l
	case <-time.After(deadline):
		r.t.Fatalf("no answer within %v", deadline)
	}
	return ""
}

// wait waits for the server to exit (within the deadline) and returns how.
func (r *rawServer) wait() error {
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(deadline):
		return fmt.Errorf("still running after %v", deadline)
	}
}

// ping checks the server still answers, and that nothing else came before
// the answer.
func (r *rawServer) ping(id string) {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`)
	if got, want := r.recv(), `{"jsonrpc":"2.0","id":"`+id+`","result":{}}`; got != want {
		r.t.Fatalf("ping: got %s, want %s", got, want)
	}
}

// rpcAnswer is a response as it came, its id kept as raw text.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeAnswer(t *testing.T, line string) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("the server wrote %q: %v", line, err)
	}
	return a
}

// toolCall is a tools/call request line.
func toolCall(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// TestMalformedLinesAreAnswered: each line that is not a valid JSON-RPC
// message gets the error JSON-RPC 2.0 names for it (-32700 for invalid
// JSON, -32600 otherwise), under the id when it can be read and null
// otherwise, and the server keeps serving, its session still running. A
// line over the 16 MiB limit is answered and skipped, and the line after
// it is read as usual. (The SDK's own transport ended the connection, and
// with it every session, on the first such line.)
func TestMalformedLinesAreAnswered(t *testing.T) {
	t.Parallel()
	r := startRaw(t, "2025-06-18")
	r.send(toolCall("1", "start", `{"command":["sleep","600"]}`))
	var st struct {
		Result struct {
			StructuredContent started `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.recv()), &st); err != nil || st.Result.StructuredContent.PID <= 0 {
		t.Fatalf("start: %v %+v", err, st)
	}
	s := st.Result.StructuredContent
	t.Cleanup(func() { reap(t, s.Socket, s.PID) })

	for _, tc := range []struct {
		line string
		code int
		id   string
	}{
		{`{not json`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"`, -32700, "null"}, // unterminated, then a newline
		{`123`, -32600, "null"},
		{`"hi"`, -32600, "null"},
		{`null`, -32600, "null"},
		{`[]`, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"}, // no batches in 2025-06-18
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		{`{"id":3,"method":"ping"}`, -32600, "3"},
		{`{"jsonrpc":"1.0","id":4,"method":"ping"}`, -32600, "4"},
		{`{"jsonrpc":"2.0","id":5,"method":5}`, -32600, "5"},
		{`{"jsonrpc":"2.0","id":6}`, -32600, "6"},
		{`{"jsonrpc":"2.0","id":"x","method":"ping","params":{"pad":"` + strings.Repeat("x", 16<<20) + `"}}`, -32600, "null"},
	} {
		r.send(tc.line)
		a := decodeAnswer(t, r.recv())
		if a.Error == nil || a.Error.Code != tc.code || string(a.ID) != tc.id || a.JSONRPC != "2.0" {
			t.Errorf("%.60s: got %+v id %s, want code %d id %s", tc.line, a.Error, a.ID, tc.code, tc.id)
		}
		r.ping("after")
	}
	// Blank lines are no messages.
	r.send("")
	r.send("  \t")
	r.ping("after blank lines")
	r.send(toolCall(`"st"`, "status", `{"session":"s1"}`))
	if a := decodeAnswer(t, r.recv()); a.Error != nil || !strings.Contains(string(a.Result), `"running":true`) {
		t.Fatalf("the session after the malformed lines: %s %+v", a.Result, a.Error)
	}
}

// TestIDsAreEchoedExactly: a response carries the id of its request as
// the client wrote it, whatever its size (the SDK read ids as float64:
// 2^53+1 came back as 2^53, and past 2^63 as -2^63).
func TestIDsAreEchoedExactly(t *testing.T) {
	t.Parallel()
	r := startRaw(t, "2025-06-18")
	for _, id := range []string{
		"0", "-7", "9007199254740993", "9223372036854775807", "-9223372036854775808",
		"12345678901234567890", "18446744073709551616", "1.0", "1E2",
		`"0"`, `""`, `"a\"b\u00e9"`,
	} {
		r.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if got, want := r.recv(), `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`; got != want {
			t.Errorf("id %s: got %s, want %s", id, got, want)
		}
	}
	// A tool call too, its result under the client's id.
	r.send(toolCall("12345678901234567891", "list", "{}"))
	if a := decodeAnswer(t, r.recv()); string(a.ID) != "12345678901234567891" || a.Error != nil {
		t.Errorf("tools/call: id %s, error %+v", a.ID, a.Error)
	}
}

// TestBatchesAreAnswered: under protocol 2025-03-26, which requires
// servers to receive JSON-RPC batches, a batch is answered with one array
// of the answers to its requests (none for its notifications, nothing at
// all for a batch of notifications), a member that is not a valid request
// gets its error in the array, and no batch ends the server. (The SDK
// never answered a batch with a notification in it, and a batch of two
// notifications or with a repeated id ended the server.)
func TestBatchesAreAnswered(t *testing.T) {
	t.Parallel()
	r := startRaw(t, "2025-03-26")
	for _, tc := range []struct{ batch, want string }{
		{`[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/foo"}]`,
			`[{"jsonrpc":"2.0","id":"b1","result":{}}]`},
		{`[{"jsonrpc":"2.0","method":"notifications/foo"},{"jsonrpc":"2.0","method":"notifications/bar"}]`,
			``},
		{`[{"jsonrpc":"2.0","id":"b2","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]`,
			`[{"jsonrpc":"2.0","id":"b2","result":{}},{"jsonrpc":"2.0","id":"b2","error":{"code":-32600,"message":"invalid request: id \"b2\" is already used by a request in progress"}}]`},
		{`[1,{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}]`,
			`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a JSON-RPC message is a JSON object"}},{"jsonrpc":"2.0","id":9007199254740993,"result":{}}]`},
		{`[]`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`},
	} {
		r.send(tc.batch)
		if tc.want != "" {
			if got := r.recv(); got != tc.want {
				t.Errorf("batch %s:\n got %s\nwant %s", tc.batch, got, tc.want)
			}
		}
		r.ping("after") // also: nothing else came for the batch
	}
	// A tool call in a batch: its result is in the array, under its id.
	r.send(`[` + toolCall(`"l"`, "list", "{}") + `,{"jsonrpc":"2.0","id":"p","method":"ping"}]`)
	var answers []rpcAnswer
	if err := json.Unmarshal([]byte(r.recv()), &answers); err != nil || len(answers) != 2 ||
		string(answers[0].ID) != `"l"` || !strings.Contains(string(answers[0].Result), "sessions") || string(answers[1].ID) != `"p"` {
		t.Fatalf("batch with a tool call: %+v %v", answers, err)
	}
}

// TestCancelledRequestGetsNoResponse: after notifications/cancelled for a
// request in progress, no response with its id is sent (MCP 2025-06-18:
// the receiver should not answer a cancelled request, and the TypeScript
// SDK reports one that comes as an error); the call itself ends, which
// the server logs. The SDK sent the cancelled call's error response.
func TestCancelledRequestGetsNoResponse(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "log")
	r := startRaw(t, "2025-06-18", "--log", logPath)
	r.send(toolCall("1", "start", `{"command":["sleep","600"]}`))
	var st struct {
		Result struct {
			StructuredContent started `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.recv()), &st); err != nil || st.Result.StructuredContent.PID <= 0 {
		t.Fatalf("start: %v %+v", err, st)
	}
	s := st.Result.StructuredContent
	t.Cleanup(func() { reap(t, s.Socket, s.PID) })

	r.send(toolCall("12345678901234567890", "wait", `{"session":"s1","contains":"NEVER","timeout_ms":600000}`))
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345678901234567890,"reason":"test"}}`)
	// The server logs the response it dropped; until then, and after, no
	// line may carry the cancelled id.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	end := time.After(deadline)
	for dropped := false; !dropped; {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatal("the server ended its output")
			}
			t.Fatalf("a line after the cancellation: %s", l)
		case <-tick.C:
			b, _ := os.ReadFile(logPath)
			dropped = strings.Contains(string(b), `"dropped the response to a cancelled request" id=12345678901234567890`)
		case <-end:
			t.Fatalf("the cancelled call did not end within %v", deadline)
		}
	}
	r.ping("after the cancellation")
}

// TestSignalDuringCallEndsPromptly: SIGTERM, SIGINT or SIGHUP while a
// tool call runs (a wait of up to ten minutes) cancels the call, stops the
// session and ends the server at once: a client's close sends SIGTERM and
// SIGKILL 2 s later (the TypeScript SDK), and SIGKILL would leave the
// session running. The SDK waited for the call to end first.
func TestSignalDuringCallEndsPromptly(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			r := startRaw(t, "2025-06-18")
			r.send(toolCall("1", "start", `{"command":["sh"]}`))
			var st struct {
				Result struct {
					StructuredContent started `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(r.recv()), &st); err != nil || st.Result.StructuredContent.PID <= 0 {
				t.Fatalf("start: %v %+v", err, st)
			}
			s := st.Result.StructuredContent
			t.Cleanup(func() { reap(t, s.Socket, s.PID) })
			r.send(toolCall("2", "wait", `{"session":"s1","contains":"NEVER","timeout_ms":600000}`))
			// The ping is read after the wait, so once it is answered the
			// wait's handler is running.
			r.ping("p")
			begin := time.Now()
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- r.cmd.Wait() }()
			// Well under the 2 s a client waits before SIGKILL, with room
			// for a loaded machine.
			const prompt = 1500 * time.Millisecond
			select {
			case err := <-exited:
				t.Logf("exited %v after %v", err, time.Since(begin))
				if err != nil {
					t.Errorf("exit: %v", err)
				}
			case <-time.After(prompt):
				r.cmd.Process.Kill()
				<-exited
				t.Fatalf("still running %v after %v", prompt, sig)
			}
			if !hosttest.WaitGone(s.PID, deadline) {
				t.Fatalf("session daemon %d still running after the server ended", s.PID)
			}
		})
	}
}

// TestInvalidLogLevelIsRefused: logging/setLevel with a level MCP does
// not name gets -32602 (invalid params), as the specification asks; the
// SDK answered {}. A valid level is still accepted.
func TestInvalidLogLevelIsRefused(t *testing.T) {
	t.Parallel()
	r := startRaw(t, "2025-06-18")
	r.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`)
	if a := decodeAnswer(t, r.recv()); a.Error == nil || a.Error.Code != -32602 || string(a.ID) != "1" || !strings.Contains(a.Error.Message, "loud") {
		t.Errorf("level loud: %+v %s", a.Error, a.Result)
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`)
	if got, want := r.recv(), `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Errorf("level warning: got %s, want %s", got, want)
	}
}
