//go:build unix

package persist

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestCheckNameAsTheRegexpSaid: the hand-written check of a server's name
// takes exactly what the regular expression it replaced took, on the
// edge cases and on random names over an alphabet with every class of
// byte it tells apart.
func TestCheckNameAsTheRegexpSaid(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$`)
	names := []string{"", "a", "_", ".", "-", "a.b", ".a", "-a", "a-", "a/b", "a b", "é", "a\x00",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "Z9._-", "bench", "..", "a\n"}
	const alphabet = "aZ09._-/ \x00\xff:@["
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.IntN(70))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		names = append(names, string(b))
	}
	for _, n := range names {
		if got, want := CheckName(n) == nil, re.MatchString(n); got != want {
			t.Errorf("CheckName(%q) accepts: %v, the regexp: %v", n, got, want)
		}
	}
}
