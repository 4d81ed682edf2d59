//go:build unix

package wire

// Command is one shell command as the session saw it through the shell's
// OSC 133 marks (a ptyplex addition): the command line the shell showed
// between the end of its prompt (B) and the start of the output (C), and
// the output up to the end mark (D) that carried the exit status.
type Command struct {
	ID      int    `json:"id"` // 1 for the session's first command, then counting up
	Command string `json:"command"`
	Running bool   `json:"running"`
	// ExitCode is the status the shell reported with D; absent while the
	// command runs, and when the shell ended it without one. ShellExited
	// says the program (the shell) exited while the command ran, without
	// D: the command ended with it, and ExitCode is the program's exit
	// code (the N of `exit N`, 128+N for signal N).
	ExitCode    *int `json:"exit_code,omitempty"`
	ShellExited bool `json:"shell_exited,omitempty"`
	// Started and Ended are Unix times in milliseconds; DurationMS runs
	// to now for a running command.
	Started    int64 `json:"started_ms"`
	Ended      int64 `json:"ended_ms,omitempty"`
	DurationMS int64 `json:"duration_ms"`
	// OutputFirst and OutputLast are the absolute lines of the output
	// (0 is the first line the main screen ever showed; they stay valid as
	// the output scrolls into the scrollback). OutputLines counts them;
	// 0 means the command printed nothing.
	OutputFirst int `json:"output_first"`
	OutputLast  int `json:"output_last"`
	OutputLines int `json:"output_lines"`
	// From and To are the same lines in OUTPUT's numbering as of this
	// answer (negative in the scrollback), for an OUTPUT "from"/"to";
	// LinesLost says how many of the first ones the scrollback no longer
	// holds (From is then the oldest that it still holds).
	From      int `json:"from,omitempty"`
	To        int `json:"to,omitempty"`
	LinesLost int `json:"lines_lost,omitempty"`
}

// CommandsData answers COMMANDS: the last commands, oldest first.
// Integration says the program has sent shell-integration marks at all;
// AtPrompt that its prompt is showing with no command running, so that a
// RUN would type at once.
type CommandsData struct {
	Commands    []Command `json:"commands"`
	Integration bool      `json:"integration"`
	AtPrompt    bool      `json:"at_prompt"`
}

// RunData answers RUN: the command's exit status and its output alone.
// TimedOut says timeout_ms passed first: the command is left running
// (Running), and Output holds what it printed so far. Output is plain
// text, every complete line ending in a newline, as `sh -c` would have
// printed it; OutputCut counts the characters "max_chars" cut from its
// top and LinesLost the lines the scrollback no longer held.
type RunData struct {
	ID         int    `json:"id,omitempty"`
	Command    string `json:"command"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Output     string `json:"output"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Running    bool   `json:"running,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	OutputCut  int    `json:"output_cut,omitempty"`
	LinesLost  int    `json:"lines_lost,omitempty"`
	// ScrollbackCleared says the lost lines were erased with the
	// scrollback (ED 3, as `clear` sends) rather than pushed out of it:
	// keep_lines would not have kept them.
	ScrollbackCleared bool `json:"scrollback_cleared,omitempty"`
	// ShellExited says the shell itself ended (the command was `exit`, or
	// it killed the shell); ExitCode is then the shell's.
	ShellExited bool `json:"shell_exited,omitempty"`
	// WaitingFor says what a timed-out RUN was still waiting for: "prompt"
	// (an earlier command was still running, so this one was not typed:
	// Output is empty and ID, when set, is that earlier command's) or
	// "end" (it was typed and has not finished).
	WaitingFor string `json:"waiting_for,omitempty"`
}

// MaxKeepLines bounds RUN's "keep_lines": the most lines of a command's
// output a session's scrollback is grown to hold (about 100 MB of short
// lines).
const MaxKeepLines = 1_000_000
