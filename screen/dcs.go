package screen

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/screen/vtparse"
)

// The two device control strings that are queries, answered as xterm
// answers them (ctlseqs, "Device-Control functions"):
//
//   - DECRQSS, DCS $ q Pt ST: the setting Pt names, as the control that
//     would set it, in DCS 1 $ r Pt ST; one the screen does not keep
//     gets DCS 0 $ r ST. vim asks for the cursor style (" q) this way.
//   - XTGETTCAP, DCS + q Pt ST: the terminfo capabilities whose names Pt
//     lists in hex, separated by ';'. Each known one is answered
//     DCS 1 + r name=value ST (both in hex), each unknown one
//     DCS 0 + r name ST, in the order asked.
//
// Any other string is recorded as unhandled.

// termName is the terminal name XTGETTCAP's TN answers: the TERM the
// terminals are started with (ptyhost.DefaultTerm).
const termName = "xterm-256color"

// dcsDispatch handles a complete DCS string.
func (s *Screen) dcsDispatch(seq *vtparse.Seq) {
	body, ok := dcsBody(seq)
	switch {
	case !ok:
		s.recordUnhandled()
	case bytes.HasPrefix(body, []byte("$q")):
		s.requestSetting(body[2:])
	case bytes.HasPrefix(body, []byte("+q")):
		s.requestTermcap(body[2:])
	default:
		s.recordUnhandled()
	}
}

// dcsBody is what came between ESC P and ST, or ok false for a string cut
// short (by the parser's cap, or by another sequence than ST).
func dcsBody(seq *vtparse.Seq) ([]byte, bool) {
	raw := seq.Raw
	if seq.Truncated || len(raw) < 4 || raw[0] != 0x1b || raw[1] != 'P' || !bytes.HasSuffix(raw, []byte("\x1b\\")) {
		return nil, false
	}
	return raw[2 : len(raw)-2], true
}

// requestSetting answers DECRQSS for the setting named by pt.
func (s *Screen) requestSetting(pt []byte) {
	var v []byte
	switch string(pt) {
	case "m": // SGR: the pen, from a reset
		v = s.AppendPen(v)[2:] // without the CSI
	case "r": // DECSTBM
		v = strconv.AppendInt(v, int64(s.top+1), 10)
		v = append(v, ';')
		v = strconv.AppendInt(v, int64(s.bottom+1), 10)
		v = append(v, 'r')
	case "s": // DECSLRM
		v = strconv.AppendInt(v, int64(s.left+1), 10)
		v = append(v, ';')
		v = strconv.AppendInt(v, int64(s.right+1), 10)
		v = append(v, 's')
	case " q": // DECSCUSR: 0 and unset are xterm's default, a steady block
		style := s.cursorStyle
		if style == 0 {
			style = 2
		}
		v = strconv.AppendInt(v, int64(style), 10)
		v = append(v, " q"...)
	case `"p`: // DECSCL: the level DA1 claims, 7-bit controls
		v = append(v, `62;1"p`...)
	case `"q`: // DECSCA: no cell is ever protected here
		v = append(v, `0"q`...)
	default:
		s.replies = append(s.replies, "\x1bP0$r\x1b\\"...)
		return
	}
	s.replies = append(s.replies, "\x1bP1$r"...)
	s.replies = append(s.replies, v...)
	s.replies = append(s.replies, "\x1b\\"...)
}

// termcaps are the capabilities XTGETTCAP answers: the terminal's name
// and its colours, what programs ask to choose their colours by.
var termcaps = map[string]string{
	"TN":     termName,
	"name":   termName,
	"Co":     "256",
	"colors": "256",
}

// requestTermcap answers XTGETTCAP for each hex-encoded name in pt.
func (s *Screen) requestTermcap(pt []byte) {
	for _, h := range bytes.Split(pt, []byte(";")) {
		name := make([]byte, hex.DecodedLen(len(h)))
		n, err := hex.Decode(name, h)
		value, known := termcaps[string(name[:n])]
		if err != nil || len(h) == 0 || !known {
			s.replies = append(s.replies, "\x1bP0+r"...)
			s.replies = append(s.replies, h...)
			s.replies = append(s.replies, "\x1b\\"...)
			continue
		}
		s.replies = append(s.replies, "\x1bP1+r"...)
		s.replies = append(s.replies, h...)
		s.replies = append(s.replies, '=')
		s.replies = appendUpperHex(s.replies, value)
		s.replies = append(s.replies, "\x1b\\"...)
	}
}

// appendUpperHex appends v in hex, upper case, as xterm writes its values.
func appendUpperHex(b []byte, v string) []byte {
	return append(b, strings.ToUpper(hex.EncodeToString([]byte(v)))...)
}
