//go:build unix && ptyplex_inputquiet

package ptyhost

// forceQuietInput: built with -tags ptyplex_inputquiet, a test binary
// that answers "unknown" on Linux as macOS does, so that the quiet
// fallback of the input wait is tested where CI runs
// (TestWaitInputQuietFallback in cmd/ptyplex).
const forceQuietInput = true
