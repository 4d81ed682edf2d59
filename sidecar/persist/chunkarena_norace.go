//go:build unix && !race

package persist

const raceBuild = false
