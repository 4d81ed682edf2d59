package sidecar

// trueCmd is a program that exits 0 at once without reading its input:
// on Windows, cmd.exe's exit (there is no true.exe).
var trueCmd = []string{"cmd.exe", "/c", "exit 0"}
