package ptyhost

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// Batch files (.bat, .cmd) are run by cmd.exe, which reads the command
// line by its own rules, not CommandLineToArgvW's: quoted as for any
// other program, an argument such as `x"&echo INJECTED&"` ends the
// quotes where cmd.exe sees them end and runs the rest as a command
// ("BatBadBut", CVE-2024-24576 in Rust's std; CreateProcess runs a batch
// file through cmd.exe whatever the caller quoted). With PATHEXT lookup,
// npm.cmd and other shims are reachable by bare name, so a host passing
// user text as an argument would run commands.
//
// A batch file is therefore started as Rust's std starts one: the
// system's cmd.exe, with the command line
//
//	cmd.exe /e:ON /v:OFF /d /c ""C:\path\x.bat" arg1 arg2"
//
// (/d: no AutoRun commands; /v:OFF: no !delayed! expansion; /e:ON for the
// %cd:~,% below; the outer quotes are the ones /c strips). Each argument
// is quoted if it holds anything but letters, digits and #$*+-./:?@\_
// (or is empty, or ends in a backslash); inside the quotes a '"' is
// doubled, which keeps cmd.exe inside the quotes, and a '%' becomes
// "%%cd:~,%" so that %NAME% is never expanded (%cd:~,% expands to
// nothing). The batch file sees each argument as one %N, quoted as above
// (%~N takes the outer quotes off). An argument with a carriage return or
// a line feed cannot be passed through cmd.exe at all and is refused, as
// is a script path holding '%' or '"'.

// isBatch says path names a batch file, which cmd.exe runs.
func isBatch(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".bat", ".cmd":
		return true
	}
	return false
}

// errBatchArg refuses an argument no batch file can be given safely.
var errBatchArg = errors.New("a batch file (.bat, .cmd) cannot be given an argument with a carriage return or a line feed: cmd.exe would end the command there")

// errBatchCmdLine refuses a verbatim command line for a batch file:
// cmd.exe would read that line once more, where a quote, a '&' or a
// %NAME% in it could run what the caller meant as text, which the
// quoting above exists to prevent.
var errBatchCmdLine = errors.New("a batch file (.bat, .cmd) cannot be given a command line as it is (commandLine): cmd.exe would read it again and could run what it holds; give args, which are quoted for it")

// batchCommandLine is the program and the command line that run the
// batch file script with args, every argument reaching the script as one
// %N and none of it run by cmd.exe.
func batchCommandLine(script string, args []string) (app, cmdline string, err error) {
	if strings.ContainsAny(script, `"%`) {
		return "", "", fmt.Errorf("batch file %s: a path holding '\"' or '%%' cannot be passed to cmd.exe safely", script)
	}
	sys, err := windows.GetSystemDirectory()
	if err != nil {
		return "", "", fmt.Errorf("GetSystemDirectory: %w", err)
	}
	var b strings.Builder
	b.WriteString(`cmd.exe /e:ON /v:OFF /d /c ""`)
	b.WriteString(script)
	b.WriteByte('"')
	for i, a := range args {
		if strings.ContainsAny(a, "\r\n") {
			return "", "", fmt.Errorf("args[%d] %q: %w", i, a, errBatchArg)
		}
		b.WriteByte(' ')
		appendBatchArg(&b, a)
	}
	b.WriteByte('"')
	return filepath.Join(sys, "cmd.exe"), b.String(), nil
}

// appendBatchArg appends a as cmd.exe must see it to pass it on as one
// argument that runs nothing (Rust std's append_bat_arg).
func appendBatchArg(b *strings.Builder, a string) {
	quote := a == "" || strings.HasSuffix(a, `\`)
	for _, r := range a {
		if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(`#$*+-./:?@\_`, r)) {
			quote = true
		}
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			quote = true
		}
	}
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, r := range a {
		switch r {
		case '\\':
			backslashes++
			b.WriteRune(r)
			continue
		case '"':
			// Backslashes before a quote doubled, and the quote doubled.
			b.WriteString(strings.Repeat(`\`, backslashes))
			b.WriteByte('"')
		case '%':
			b.WriteString("%%cd:~,")
		}
		backslashes = 0
		b.WriteRune(r)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, backslashes))
		b.WriteByte('"')
	}
}
