package screen

import (
	"fmt"
	"strconv"
	"strings"
)

// colorTable holds the colours a program set with OSC 4 (palette) and
// OSC 10/11/12 (default foreground, background, cursor), so a query
// answers what was set; unset entries answer the defaults below.
type colorTable struct {
	palette map[int]uint32 // index -> 0xRRGGBB
	dynamic [3]uint32      // fg, bg, cursor as 0xRRGGBB
	dynSet  [3]bool
}

// A headless screen has no real colours; it answers as a dark terminal
// (white on black), which is what xterm.js reports by default and
// what most programs assume when they cannot ask.
var defaultDynamic = [3]uint32{0xffffff, 0x000000, 0xffffff}

// palette256 returns xterm's default colour for palette index i.
func palette256(i int) uint32 {
	base := [16]uint32{
		0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
		0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
	}
	switch {
	case i < 16:
		return base[i]
	case i < 232:
		i -= 16
		level := func(v int) uint32 {
			if v == 0 {
				return 0
			}
			return uint32(55 + 40*v)
		}
		return level(i/36)<<16 | level(i/6%6)<<8 | level(i%6)
	default:
		g := uint32(8 + 10*(i-232))
		return g<<16 | g<<8 | g
	}
}

func (t *colorTable) paletteColor(i int) uint32 {
	if c, ok := t.palette[i]; ok {
		return c
	}
	return palette256(i)
}

func (t *colorTable) dynamicColor(i int) uint32 {
	if t.dynSet[i] {
		return t.dynamic[i]
	}
	return defaultDynamic[i]
}

// parseColor reads the X11 colour forms programs send: rgb:R/G/B with 1-4
// hex digits per component, and #RGB, #RRGGBB, #RRRGGGBBB, #RRRRGGGGBBBB.
func parseColor(spec string) (uint32, bool) {
	scale := func(h string) (uint32, bool) {
		if len(h) < 1 || len(h) > 4 {
			return 0, false
		}
		v, err := strconv.ParseUint(h, 16, 16)
		if err != nil {
			return 0, false
		}
		max := uint64(1)<<(4*len(h)) - 1
		return uint32(v * 255 / max), true
	}
	var parts []string
	switch {
	case strings.HasPrefix(spec, "rgb:"):
		parts = strings.Split(spec[4:], "/")
	case strings.HasPrefix(spec, "#") && len(spec) > 1 && (len(spec)-1)%3 == 0:
		n := (len(spec) - 1) / 3
		h := spec[1:]
		parts = []string{h[:n], h[n : 2*n], h[2*n:]}
	default:
		return 0, false
	}
	if len(parts) != 3 {
		return 0, false
	}
	var c uint32
	for _, p := range parts {
		v, ok := scale(p)
		if !ok {
			return 0, false
		}
		c = c<<8 | v
	}
	return c, true
}

// appendColorReply appends the xterm answer form rgb:RRRR/GGGG/BBBB.
func appendColorReply(b []byte, c uint32) []byte {
	r, g, bl := c>>16&0xff, c>>8&0xff, c&0xff
	return fmt.Appendf(b, "rgb:%02x%02x/%02x%02x/%02x%02x", r, r, g, g, bl, bl)
}

// oscColor handles OSC 4 (palette: pairs of index;spec) and OSC 10/11/12
// (dynamic colours; one spec each, and further specs move on to the next
// number, as xterm does). A "?" spec is a query and produces a reply
// ending with the terminator the query used.
func (s *Screen) oscColor(n int, args string) {
	term := "\x1b\\"
	if s.seq.BEL {
		term = "\x07"
	}
	bad := false
	if n == 4 {
		f := strings.Split(args, ";")
		if len(f)%2 != 0 {
			bad = true
			f = f[:len(f)-1]
		}
		for i := 0; i+1 < len(f); i += 2 {
			idx, err := strconv.Atoi(f[i])
			if err != nil || idx < 0 || idx > 255 {
				bad = true
				continue
			}
			if f[i+1] == "?" {
				s.replies = fmt.Appendf(s.replies, "\x1b]4;%d;", idx)
				s.replies = appendColorReply(s.replies, s.colors.paletteColor(idx))
				s.replies = append(s.replies, term...)
				continue
			}
			c, ok := parseColor(f[i+1])
			if !ok {
				bad = true
				continue
			}
			if s.colors.palette == nil {
				s.colors.palette = make(map[int]uint32)
			}
			s.colors.palette[idx] = c
		}
	} else {
		for i, spec := range strings.Split(args, ";") {
			k := n - 10 + i
			if k > 2 {
				break
			}
			if spec == "?" {
				s.replies = fmt.Appendf(s.replies, "\x1b]%d;", 10+k)
				s.replies = appendColorReply(s.replies, s.colors.dynamicColor(k))
				s.replies = append(s.replies, term...)
				continue
			}
			c, ok := parseColor(spec)
			if !ok {
				bad = true
				continue
			}
			s.colors.dynamic[k], s.colors.dynSet[k] = c, true
		}
	}
	if bad {
		s.recordUnhandled()
	}
}

// oscColorReset handles OSC 104 (palette entries, all without arguments)
// and OSC 110/111/112.
func (s *Screen) oscColorReset(n int, args string) {
	if n != 104 {
		s.colors.dynSet[n-110] = false
		return
	}
	if args == "" {
		s.colors.palette = nil
		return
	}
	for _, f := range strings.Split(args, ";") {
		if idx, err := strconv.Atoi(f); err == nil {
			delete(s.colors.palette, idx)
		}
	}
}
