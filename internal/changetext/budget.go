//go:build unix

package changetext

import (
	"strings"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/session/wire"
)

// EnforceBudget applies a max_chars budget to a plain OUTPUT answer whose
// daemon ignored it (one that predates the field answers the whole range
// and no "cut"), with the daemon's own rule: whole lines dropped from the
// top until the rest fits, each counted with its newline. An answer that
// the daemon already cut, or that fits, is left as it is. out's From/To
// must be resolved (see the CLI's outputAnswer.resolved).
func EnforceBudget(out *wire.OutputData, maxChars int) {
	if maxChars <= 0 || out.Cut != nil || out.Since != "" {
		return
	}
	nums := numbers(out.From, out.To)
	texts := strings.Split(out.Screen, "\n")
	if len(texts) > len(nums) {
		texts = texts[:len(nums)]
	}
	for len(texts) < len(nums) {
		texts = append(texts, "")
	}
	total := 0
	for _, t := range texts {
		total += utf8.RuneCountInString(t) + 1
	}
	k, chars := 0, 0
	for k < len(texts) && total > maxChars {
		c := utf8.RuneCountInString(texts[k]) + 1
		total -= c
		chars += c
		k++
	}
	if k == 0 {
		return
	}
	out.Cut = &wire.Cut{Lines: k, Chars: chars, From: nums[0], To: nums[k-1]}
	out.From = nums[k-1] + 1
	if out.From == 0 {
		out.From = 1
	}
	out.Screen = ""
	if rest := texts[k:]; len(rest) > 0 {
		out.Screen = strings.Join(rest, "\n") + "\n"
	}
}
