//go:build unix

package persist

// OpenCandidate is openCandidate, for the attack tests.
var OpenCandidate = openCandidate

// ExecCandidate is execCandidate, for the attack tests' helper process.
var ExecCandidate = execCandidate

// HandoverMark is handoverMark, for tests that make binaries of another
// format out of the real one.
const HandoverMark = handoverMark
