package screen

// sgr applies Select Graphic Rendition parameters to the pen. Colours
// keep the form they were given in (see color).
func (s *Screen) sgr() {
	p := s.seq
	if len(p.Params) == 0 {
		s.pen = attrs{}
		return
	}
	unknown := false
	for i := 0; i < len(p.Params); i++ {
		v := p.Params[i]
		// Sub-parameters belonging to this one (colon form), if any.
		j := i + 1
		for j < len(p.Params) && p.Sub[j] {
			j++
		}
		subs := p.Params[i+1 : j]
		switch {
		case v == 0:
			s.pen = attrs{}
		case v == 1:
			s.pen.flags |= flagBold
		case v == 2:
			s.pen.flags |= flagDim
		case v == 3:
			s.pen.flags |= flagItalic
		case v == 4:
			// 4:0 is "no underline"; 4:1..4:5 are underline styles.
			if len(subs) > 0 && subs[0] == 0 {
				s.pen.flags &^= flagUnderline
			} else {
				s.pen.flags |= flagUnderline
			}
		case v == 5 || v == 6:
			s.pen.flags |= flagBlink
		case v == 7:
			s.pen.flags |= flagInverse
		case v == 8:
			s.pen.flags |= flagHidden
		case v == 9:
			s.pen.flags |= flagStrike
		case v == 21:
			s.pen.flags |= flagUnderline // double underline, shown as underline
		case v == 22:
			s.pen.flags &^= flagBold | flagDim
		case v == 23:
			s.pen.flags &^= flagItalic
		case v == 24:
			s.pen.flags &^= flagUnderline
		case v == 25:
			s.pen.flags &^= flagBlink
		case v == 27:
			s.pen.flags &^= flagInverse
		case v == 28:
			s.pen.flags &^= flagHidden
		case v == 29:
			s.pen.flags &^= flagStrike
		case v >= 30 && v <= 37:
			s.pen.fg = colorKind16 | color(v-30)
		case v == 39:
			s.pen.fg = colorDefault
		case v >= 40 && v <= 47:
			s.pen.bg = colorKind16 | color(v-40)
		case v == 49:
			s.pen.bg = colorDefault
		case v >= 90 && v <= 97:
			s.pen.fg = colorKind16 | color(v-90+8)
		case v >= 100 && v <= 107:
			s.pen.bg = colorKind16 | color(v-100+8)
		case v == 38 || v == 48 || v == 58:
			var c color
			var ok bool
			if len(subs) > 0 {
				c, ok = extendedColor(subs, true)
			} else {
				var used int
				c, ok, used = extendedColorSemi(p.Params[i+1 : len(p.Params)])
				j = i + 1 + used
			}
			if !ok {
				unknown = true
			}
			switch {
			case !ok, v == 58: // underline colour is not rendered
			case v == 38:
				s.pen.fg = c
			default:
				s.pen.bg = c
			}
		case v == 59, v >= 10 && v <= 20, v == 26, v >= 50 && v <= 57, v >= 60 && v <= 65, v >= 73 && v <= 75:
			// Fonts, overline, frames, ideograms, super/subscript: known
			// attributes that a text screen cannot show.
		default:
			unknown = true
		}
		i = j - 1
	}
	if unknown {
		s.recordUnhandled()
	}
}

// extendedColor decodes the colon form: 5:N, 2:R:G:B or 2:CS:R:G:B.
func extendedColor(subs []int, _ bool) (color, bool) {
	switch {
	case subs[0] == 5 && len(subs) >= 2 && subs[1] <= 255:
		return colorKind256 | color(subs[1]), true
	case subs[0] == 2 && len(subs) >= 4:
		rgb := subs[1:]
		if len(subs) >= 5 {
			rgb = subs[2:] // the colour-space id comes first
		}
		return rgbColor(rgb[0], rgb[1], rgb[2])
	}
	return 0, false
}

// extendedColorSemi decodes the semicolon form from the parameters that
// follow 38/48 and reports how many it used.
func extendedColorSemi(rest []int) (color, bool, int) {
	if len(rest) == 0 {
		return 0, false, 0
	}
	switch rest[0] {
	case 5:
		if len(rest) < 2 || rest[1] > 255 {
			return 0, false, len(rest)
		}
		return colorKind256 | color(rest[1]), true, 2
	case 2:
		if len(rest) < 4 {
			return 0, false, len(rest)
		}
		c, ok := rgbColor(rest[1], rest[2], rest[3])
		return c, ok, 4
	}
	return 0, false, 1
}

func rgbColor(r, g, b int) (color, bool) {
	if r > 255 || g > 255 || b > 255 {
		return 0, false
	}
	return colorKindRGB | color(r<<16|g<<8|b), true
}
