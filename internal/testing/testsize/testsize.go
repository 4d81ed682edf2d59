// Package testsize picks the size of the tests' long loops: the short
// round that `make test` runs, or the full one that `make soak` runs
// (PTYPLEX_SOAK=1 in the environment). Both prove the same behaviour; the
// full size is for the rare failure that needs many rounds to show.
package testsize

import "os"

// Env is the environment variable that selects the full size.
const Env = "PTYPLEX_SOAK"

// Full reports whether the full size was asked for.
func Full() bool { return os.Getenv(Env) == "1" }

// Pick returns full under PTYPLEX_SOAK=1 and short otherwise.
func Pick[T any](short, full T) T {
	if Full() {
		return full
	}
	return short
}
