//go:build unix

package changetext

import (
	"strings"

	"github.com/ptyplex/ptyplex/session/wire"
)

// EnforceBudget applies a max_chars budget to a plain OUTPUT answer whose
// daemon ignored it (one that predates the field answers the whole range
// and no "cut"), with the daemon's own rule (wire.BudgetCut: whole lines
// dropped from the top until the text of the rest fits, blank lines free,
// and the blank lines under the last text left out). An answer that the
// daemon already cut is left as it is. out's From/To
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
	k, chars := wire.BudgetCut(texts, maxChars)
	if k > 0 {
		out.Cut = &wire.Cut{Lines: k, Chars: chars, From: nums[0], To: nums[k-1]}
		out.From = nums[k-1] + 1
		if out.From == 0 {
			out.From = 1
		}
	}
	rest, restNums := texts[k:], nums[k:]
	if b := wire.TrailingBlank(rest); b > 0 {
		rest, restNums = rest[:len(rest)-b], restNums[:len(restNums)-b]
		out.To = out.From - 1
		if len(restNums) > 0 {
			out.To = restNums[len(restNums)-1]
		}
	}
	out.Screen = ""
	if len(rest) > 0 {
		out.Screen = strings.Join(rest, "\n") + "\n"
	}
}
