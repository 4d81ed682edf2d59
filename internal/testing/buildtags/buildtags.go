// Package buildtags tells tests that build the ptyplex binaries which of
// this module's build tags the test binary itself was built with, so that
// `go test -tags ptyplex_portable` drives binaries with the portable
// backend too.
package buildtags

// GoBuildArgs are the arguments to add to `go build` for the same tags;
// empty when none is set.
func GoBuildArgs() []string {
	if tags == "" {
		return nil
	}
	return []string{"-tags", tags}
}
