package vtstate

import "strconv"

// apply applies one SGR's parameters (sub[i]: params[i] came after ':').
func (p *Pen) apply(params []int, sub []bool) {
	if len(params) == 0 {
		*p = Pen{}
		return
	}
	for i := 0; i < len(params); i++ {
		// The sub-parameters of params[i], if it has any.
		j := i + 1
		for j < len(params) && sub[j] {
			j++
		}
		subs := params[i+1 : j]
		switch n := params[i]; {
		case n == 0:
			*p = Pen{}
		case n == 1:
			p.Flags |= Bold
		case n == 2:
			p.Flags |= Dim
		case n == 3:
			p.Flags |= Italic
		case n == 4:
			p.Underline = 1
			if len(subs) > 0 && subs[0] <= 5 {
				p.Underline = uint8(subs[0])
			}
		case n == 5 || n == 6:
			p.Flags |= Blink
		case n == 7:
			p.Flags |= Inverse
		case n == 8:
			p.Flags |= Hidden
		case n == 9:
			p.Flags |= Strike
		case n == 21:
			p.Underline = 2
		case n == 22:
			p.Flags &^= Bold | Dim
		case n == 23:
			p.Flags &^= Italic
		case n == 24:
			p.Underline = 0
		case n == 25:
			p.Flags &^= Blink
		case n == 27:
			p.Flags &^= Inverse
		case n == 28:
			p.Flags &^= Hidden
		case n == 29:
			p.Flags &^= Strike
		case n >= 30 && n <= 37:
			p.FG = Color{Kind16, uint32(n - 30)}
		case n == 39:
			p.FG = Color{}
		case n >= 40 && n <= 47:
			p.BG = Color{Kind16, uint32(n - 40)}
		case n == 49:
			p.BG = Color{}
		case n == 53:
			p.Flags |= Overline
		case n == 55:
			p.Flags &^= Overline
		case n == 59:
			p.UL = Color{}
		case n >= 90 && n <= 97:
			p.FG = Color{Kind16, uint32(n - 90 + 8)}
		case n >= 100 && n <= 107:
			p.BG = Color{Kind16, uint32(n - 100 + 8)}
		case n == 38 || n == 48 || n == 58:
			var c Color
			var ok bool
			if len(subs) > 0 {
				c, ok = extColor(subs, true)
			} else {
				var used int
				c, used, ok = extColorSemi(params[i+1:])
				j = i + 1 + used
			}
			if ok {
				switch n {
				case 38:
					p.FG = c
				case 48:
					p.BG = c
				default:
					p.UL = c
				}
			}
		}
		i = j - 1
	}
}

// extColor reads 5:n or 2:[cs:]r:g:b (the colon form).
func extColor(subs []int, colon bool) (Color, bool) {
	switch {
	case subs[0] == 5 && len(subs) >= 2:
		return Color{Kind256, uint32(subs[1] & 0xff)}, true
	case subs[0] == 2 && len(subs) >= 5:
		return rgb(subs[2], subs[3], subs[4]), true
	case subs[0] == 2 && len(subs) == 4:
		return rgb(subs[1], subs[2], subs[3]), true
	}
	return Color{}, false
}

// extColorSemi reads 5;n or 2;r;g;b and reports how many parameters it
// used.
func extColorSemi(rest []int) (Color, int, bool) {
	switch {
	case len(rest) >= 2 && rest[0] == 5:
		return Color{Kind256, uint32(rest[1] & 0xff)}, 2, true
	case len(rest) >= 4 && rest[0] == 2:
		return rgb(rest[1], rest[2], rest[3]), 4, true
	case len(rest) >= 1:
		return Color{}, len(rest), false // xterm.js drops what follows a broken one
	}
	return Color{}, 0, false
}

func rgb(r, g, b int) Color {
	return Color{KindRGB, uint32(r&0xff)<<16 | uint32(g&0xff)<<8 | uint32(b&0xff)}
}

var penFlags = [...]struct {
	flag uint16
	code string
}{
	{Bold, "1"}, {Dim, "2"}, {Italic, "3"}, {Blink, "5"}, {Inverse, "7"}, {Hidden, "8"}, {Strike, "9"}, {Overline, "53"},
}

// AppendSGR appends the SGR sequence that sets the pen to p from any
// other: a reset, then every attribute and colour p has.
func AppendSGR(b []byte, p Pen) []byte {
	b = append(b, "\x1b[0"...)
	for _, f := range penFlags {
		if p.Flags&f.flag != 0 {
			b = append(b, ';')
			b = append(b, f.code...)
		}
	}
	switch p.Underline {
	case 0:
	case 1:
		b = append(b, ";4"...)
	default:
		b = append(b, ";4:"...)
		b = strconv.AppendInt(b, int64(p.Underline), 10)
	}
	b = appendColor(b, p.FG, 30, 90, "38")
	b = appendColor(b, p.BG, 40, 100, "48")
	b = appendColor(b, p.UL, -1, -1, "58")
	return append(b, 'm')
}

func appendColor(b []byte, c Color, base, bright int, ext string) []byte {
	switch c.Kind {
	case Kind16:
		if base < 0 {
			return b
		}
		b = append(b, ';')
		if c.V < 8 {
			return strconv.AppendInt(b, int64(base+int(c.V)), 10)
		}
		return strconv.AppendInt(b, int64(bright+int(c.V)-8), 10)
	case Kind256:
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";5;"...)
		return strconv.AppendInt(b, int64(c.V), 10)
	case KindRGB:
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";2;"...)
		b = strconv.AppendInt(b, int64(c.V>>16), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(c.V>>8&0xff), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(c.V&0xff), 10)
	}
	return b
}
