package proto

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// An ERROR quotes what the host sent; however much that was, the frame
// stays within MaxFrame, and an ordinary one is encoded as before.
func TestErrorFitsInAFrame(t *testing.T) {
	if got := string(Marshal(Error{TerminalID: "t<1>", Message: "cannot start x"})); got != `{"message":"cannot start x","terminalId":"t<1>"}` {
		t.Errorf("ordinary ERROR: %s", got)
	}
	huge := "/nonexistent/" + strings.Repeat("\x01é", 3<<20)
	for _, e := range []Error{
		{TerminalID: "t", Message: "cannot start " + huge + ": stat " + huge},
		{TerminalID: strings.Repeat("\x01", MaxFrame/2), Message: "terminalId too long"},
		{TerminalID: strings.Repeat("a", MaxFrame), Message: "terminalId too long"},
	} {
		body := Marshal(e)
		if 1+len(body) > MaxFrame {
			t.Fatalf("ERROR of %d bytes: over the %d byte frame limit", 1+len(body), MaxFrame)
		}
		var back Error
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(back.Message) || !strings.HasPrefix(e.Message, strings.SplitN(back.Message, " ... (", 2)[0]) {
			t.Errorf("message not cut at a character boundary of the original: ...%q", back.Message[max(0, len(back.Message)-40):])
		}
		if len(e.TerminalID) <= MaxID && back.TerminalID != e.TerminalID {
			t.Errorf("a valid id was changed")
		}
	}
}
