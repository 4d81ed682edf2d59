//go:build unix

package ptyhost

import "testing"

// BenchmarkOpenPTY opens and closes one PTY pair, as every Start does.
func BenchmarkOpenPTY(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m, s, err := openPTY()
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
		s.Close()
	}
}
