//go:build unix

package sidecar

// trueCmd is a program that exits 0 at once without reading its input.
var trueCmd = []string{"/bin/true"}
