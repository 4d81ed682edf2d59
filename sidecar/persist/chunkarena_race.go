//go:build unix && race

package persist

// raceBuild: under the race detector the chunks stay on the Go heap,
// whose accesses it watches (it ignores memory mapped outside it), so
// that the tests still see a race on a journal's bytes.
const raceBuild = true
