//go:build unix && !linux

package persist

// adviseHuge: transparent huge pages are Linux's; elsewhere b gets the
// system's pages.
func adviseHuge(b []byte) {}
