//go:build unix

package wire

import "time"

import "encoding/json"

// MaxMessage is the largest request line the protocol allows.
const MaxMessage = 10 << 20

// MaxAnswer is the largest answer line a client reads. Answers are not
// held to MaxMessage: OUTPUT of a long coloured scrollback or of a wide
// screen, and RUN with keep_lines, can be larger, and interminai's own
// client reads them whatever their size. The bound only keeps a daemon
// that never ends its line from exhausting the client's memory.
const MaxAnswer = 1 << 30

// Response is the envelope of every answer: {"status":"ok","data":{...}}
// or {"status":"error","error":"..."}, with a "code" after the error on
// some errors (errors.go).
type Response struct {
	Status string          `json:"status"`
	Data   json.RawMessage `json:"data,omitempty"`
	Error  string          `json:"error,omitempty"`
	Code   string          `json:"code,omitempty"`
}

// Cursor is a 0-based screen position.
type Cursor struct {
	Row int `json:"row"`
	Col int `json:"col"`
}

// Size is a terminal size.
type Size struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
}

// OutputData answers OUTPUT.
type OutputData struct {
	Screen              string `json:"screen"`
	Cursor              Cursor `json:"cursor"`
	Size                Size   `json:"size"`
	From                int    `json:"from"`
	To                  int    `json:"to"`
	ScrollbackAvailable int    `json:"scrollback_available"`
	ScrollbackCapacity  int    `json:"scrollback_capacity"`
	// OutputGen (a ptyplex addition) is the output generation the screen
	// reflects; present when the request asked "with_gen".
	OutputGen *int64 `json:"output_gen,omitempty"`
	// ScrolledOff (a ptyplex addition, with OutputGen) counts the lines
	// that have scrolled off the top of the main screen since the start:
	// scrollback line -1 is the ScrolledOff-th of them. Against an earlier
	// answer's, it tells how many lines scrolled by, and with
	// ScrollbackAvailable how many of those the scrollback still holds.
	ScrolledOff *int `json:"scrolled_off,omitempty"`

	// The rest are ptyplex additions, present only when the request asked
	// for them ("changes", "since", "max_chars"): the types are in changes.go,
	// the daemon's side in session/changes.go.
	//
	// Token names this read; a later OUTPUT with "since": Token answers
	// what changed after it.
	Token string `json:"token,omitempty"`
	// Since echoes the token a changes read was compared with. Its answer
	// has no screen: Changed lists the new scrollback lines and the rows
	// that differ from the client's copy, and Unchanged says there are
	// none, no scroll and the same cursor.
	Since     string `json:"since,omitempty"`
	Changed   []Line `json:"changed,omitempty"`
	Moved     []Move `json:"moved,omitempty"` // rows the client holds elsewhere in its copy
	Unchanged bool   `json:"unchanged,omitempty"`
	// Scrolled is how many lines scrolled off the top into the scrollback
	// (the client shifts its copy up by as many rows); ScrollbackLost how
	// many of those the scrollback no longer holds; ScrollbackCleared that
	// it was erased in between.
	Scrolled          int  `json:"scrolled,omitempty"`
	ScrollbackLost    int  `json:"scrollback_lost,omitempty"`
	ScrollbackCleared bool `json:"scrollback_cleared,omitempty"`
	// Redraw ("resize", "format" or "screen") says every screen row is in
	// Changed because the client's copy cannot be patched.
	Redraw string `json:"redraw,omitempty"`
	// Cut is what "max_chars" left out above the lines sent; CutBelow
	// what it left out under them (a ptyplex addition: the lines farthest
	// from the cursor go first, so a cursor above the last text, as in an
	// editor, keeps its rows and the bottom is cut too).
	Cut      *Cut `json:"cut,omitempty"`
	CutBelow *Cut `json:"cut_below,omitempty"`
}

// InputData answers an INPUT that asked "with_gen" (a ptyplex addition):
// the output generation just before the bytes were written. Without
// "with_gen" INPUT answers no data, as interminai does.
type InputData struct {
	OutputGen int64 `json:"output_gen"`
}

// StatusData answers STATUS. Activity is present only in activity mode and
// ExitCode only once the child has exited. Everything after ExitCode is a
// ptyplex addition: the terminal modes tell a client how to encode keys
// (application cursor keys change what the arrows send; bracketed paste
// wants pastes wrapped) and whether a full-screen program is up. They are
// present only when set, so a plain shell's answer stays short.
type StatusData struct {
	Running             bool   `json:"running"`
	Activity            *bool  `json:"activity,omitempty"`
	ExitCode            *int   `json:"exit_code,omitempty"`
	Size                Size   `json:"size"`
	ScrollbackAvailable int    `json:"scrollback_available"`
	ScrollbackCapacity  int    `json:"scrollback_capacity"`
	AppCursorKeys       bool   `json:"app_cursor_keys,omitempty"`
	BracketedPaste      bool   `json:"bracketed_paste,omitempty"`
	AltScreen           bool   `json:"alt_screen,omitempty"`
	Title               string `json:"title,omitempty"`
	OutputGen           *int64 `json:"output_gen,omitempty"` // with "with_gen"
	// WaitingForInput answers a STATUS that asked "input": whether the
	// foreground program is blocked reading the terminal with all its
	// output on the screen, as the kernel reports it at this moment. It
	// is absent when the platform cannot tell (see WAIT "input").
	WaitingForInput *bool `json:"waiting_for_input,omitempty"`
	// PTYDumpStopped is present once the --pty-dump file stopped at a
	// failed write (a full disk, a file size limit): nothing after it is
	// written, so the file holds a prefix of the output.
	PTYDumpStopped *DumpStop `json:"pty_dump_stopped,omitempty"`
}

// DumpStop says where and why the --pty-dump file stopped: Bytes of this
// session's output went into it (an existing file's earlier content not
// counted), then a write failed with Error.
type DumpStop struct {
	Bytes int64  `json:"bytes"`
	Error string `json:"error"`
}

// WaitData answers WAIT. Normal mode fills ExitCode; activity mode fills
// Activity and Exited. TimedOut (a ptyplex addition) is set when the
// request's timeout_ms passed first.
type WaitData struct {
	ExitCode *int  `json:"exit_code,omitempty"`
	Activity *bool `json:"activity,omitempty"`
	Exited   *bool `json:"exited,omitempty"`
	TimedOut bool  `json:"timed_out,omitempty"`
	// OutputGen answers a WAIT with "after_gen": the generation reached.
	OutputGen *int64 `json:"output_gen,omitempty"`
	// WaitingForInput answers a WAIT "input" that ended because the
	// program waits for input; Detection says how that was known:
	// "kernel" (its tasks are blocked reading the terminal) or "quiet"
	// (the platform cannot tell, and no output came for a while).
	WaitingForInput *bool  `json:"waiting_for_input,omitempty"`
	Detection       string `json:"detection,omitempty"`
}

// KillData answers KILL.
type KillData struct {
	SignalSent string `json:"signal_sent"`
}

// AttachData answers ATTACH, before the raw stream begins.
type AttachData struct {
	Size Size `json:"size"`
}

// MessageData answers STOP.
type MessageData struct {
	Message string `json:"message"`
}

// ResizeData answers RESIZE.
type ResizeData struct {
	Size Size `json:"size"`
	// Cols and Rows repeat the size at the top level, where interminai's
	// daemon puts it, for clients written against that.
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// UnhandledSeq is one unhandled escape sequence in a DEBUG answer.
type UnhandledSeq struct {
	Sequence string `json:"sequence"`
	RawHex   string `json:"raw_hex"`
}

// DebugData answers DEBUG.
// Unhandled and Termios are nil when an answer lacks them (a daemon of
// another implementation), which Text then leaves out, as interminai's
// client does.
type DebugData struct {
	Unhandled []UnhandledSeq `json:"unhandled"`
	Dropped   int            `json:"dropped"`
	Termios   *TermiosInfo   `json:"termios,omitempty"`
}

// TermiosInfo is the PTY's terminal mode in readable form. Error is set
// instead of the rest by interminai's daemon when it could not read the
// mode.
type TermiosInfo struct {
	Mode  string     `json:"mode"`
	Flags []string   `json:"flags"`
	Hex   TermiosHex `json:"hex"`
	CC    ControlCCs `json:"c_cc"`
	Error string     `json:"error,omitempty"`
}

// TermiosHex holds the four flag words as 0x%04x strings.
type TermiosHex struct {
	Iflag string `json:"iflag"`
	Oflag string `json:"oflag"`
	Lflag string `json:"lflag"`
	Cflag string `json:"cflag"`
}

// ControlCCs holds the main control characters in ^X notation, in the
// order interminai prints them.
type ControlCCs struct {
	VINTR  string `json:"VINTR"`
	VEOF   string `json:"VEOF"`
	VERASE string `json:"VERASE"`
	VKILL  string `json:"VKILL"`
	VSUSP  string `json:"VSUSP"`
	VQUIT  string `json:"VQUIT"`
}

// InputQuietFallback is how long a WAIT "input" waits without output
// where the kernel cannot say whether the program is reading its
// terminal (macOS, FreeBSD, a program we may not inspect, or a daemon
// that predates the field); its answer then says "detection": "quiet".
const InputQuietFallback = 500 * time.Millisecond
