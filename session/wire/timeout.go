//go:build unix

package wire

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// MaxTimeoutMS is the largest timeout_ms honoured as given: the most whole
// milliseconds a time.Duration holds (about 292 years). A larger value is
// clamped to it, which is a wait without a timeout in all but name; made
// into a Duration as it is, it would wrap negative and time out at once.
const MaxTimeoutMS = int64(math.MaxInt64 / int64(time.Millisecond))

// Timeout reads a timeout in milliseconds: a non-negative integer, in any
// JSON spelling of one (5000, 5e3, or beyond what an int64 holds, which is
// clamped to MaxTimeoutMS like every value above it).
func (f Fields) Timeout(name string) (time.Duration, bool, error) {
	if !f.Has(name) {
		return 0, false, nil
	}
	var num json.Number
	raw := f[name]
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &num) != nil {
		return 0, false, Invalidf("field '%s' must be an integer", name)
	}
	ms, err := strconv.ParseInt(num.String(), 10, 64)
	if err != nil {
		// Not a plain int64: an exponent form, or out of range.
		v, ferr := strconv.ParseFloat(num.String(), 64)
		if ferr != nil && (!isRange(ferr) || v == 0) || v != math.Trunc(v) {
			return 0, false, Invalidf("field '%s' must be an integer", name)
		}
		switch {
		case v < 0:
			ms = -1
		case v >= float64(MaxTimeoutMS):
			ms = MaxTimeoutMS
		default:
			ms = int64(v)
		}
	}
	if ms < 0 {
		return 0, false, Invalidf("field '%s' must not be negative", name)
	}
	return time.Duration(min(ms, MaxTimeoutMS)) * time.Millisecond, true, nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
