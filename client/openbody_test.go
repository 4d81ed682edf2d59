package client

import (
	"testing"

	"github.com/ptyplex/ptyplex/proto"
)

// OPEN carries the persistent server's fields only when set: a plain
// sidecar's OPEN is unchanged.
func TestOpenBodyPersistentFields(t *testing.T) {
	msg := proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "sh"}
	plain := string(proto.Marshal(msg))
	for _, c := range []struct {
		o    OpenOptions
		want string
	}{
		{OpenOptions{}, plain},
		{OpenOptions{OrphanMs: 60000}, `{"terminalId":"a","cols":80,"rows":24,"cmd":"sh","orphanMs":60000}`},
		{OpenOptions{OrphanMs: proto.OrphanNever, Detached: "park"}, `{"terminalId":"a","cols":80,"rows":24,"cmd":"sh","detached":"park","orphanMs":-1}`},
	} {
		if got := string(openBody(msg, c.o)); got != c.want {
			t.Errorf("openBody(%+v) = %s, want %s", c.o, got, c.want)
		}
	}
}
