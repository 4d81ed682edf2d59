//go:build unix

package changetext

import (
	"strings"

	"github.com/ptyplex/ptyplex/session/wire"
)

// EnforceBudget applies a max_chars budget to a plain OUTPUT answer whose
// daemon ignored it (one that predates the field answers the whole range
// and no "cut"), with the daemon's own rule (wire.BudgetWindow: the blank
// lines under the last text left out, then whole lines dropped farthest
// from the cursor first until the text of the rest fits, blank lines
// free). An answer that the daemon already cut is left as it is. out's
// From/To must be resolved (see the CLI's outputAnswer.resolved).
func EnforceBudget(out *wire.OutputData, maxChars int) {
	if maxChars <= 0 || out.Cut != nil || out.CutBelow != nil || out.Since != "" {
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
	if b := wire.TrailingBlank(texts); b > 0 {
		nums, texts = nums[:len(nums)-b], texts[:len(texts)-b]
	}
	w := wire.BudgetWindow(texts, wire.Anchor(nums, out.Cursor.Row+1), maxChars)
	if w.Top > 0 {
		out.Cut = &wire.Cut{Lines: w.Top, Chars: w.TopChars, From: nums[0], To: nums[w.Top-1]}
	}
	if w.Bottom > 0 {
		out.CutBelow = &wire.Cut{Lines: w.Bottom, Chars: w.BottomChars, From: nums[len(nums)-w.Bottom], To: nums[len(nums)-1]}
	}
	nums, texts = nums[w.Top:len(nums)-w.Bottom], texts[w.Top:len(texts)-w.Bottom]
	switch {
	case len(nums) > 0:
		out.From, out.To = nums[0], nums[len(nums)-1]
	case out.Cut != nil:
		out.From = out.Cut.To + 1
		if out.From == 0 {
			out.From = 1
		}
		out.To = out.From - 1
	default:
		out.To = out.From - 1
	}
	out.Screen = ""
	if len(texts) > 0 {
		out.Screen = strings.Join(texts, "\n") + "\n"
	}
}
