//go:build !ptyplex_portable

package buildtags

const tags = ""
