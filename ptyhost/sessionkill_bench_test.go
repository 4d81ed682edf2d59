//go:build unix

package ptyhost

import "testing"

// BenchmarkSessionScan is one pass over the process table as a session
// kill makes it (for a session with no processes left).
func BenchmarkSessionScan(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := sessionMembers(map[int]bool{1 << 30: true}); err != nil {
			b.Fatal(err)
		}
	}
}
