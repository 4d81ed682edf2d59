package shot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/shot"
)

// colourScreen fills a screen with coloured text in every attribute, the
// hardest case for the PNG encoder (few flat areas).
func colourScreen(cols, rows int) *screen.Screen {
	s := screen.New(cols, rows, screen.Options{})
	var b strings.Builder
	for r := 0; r < rows; r++ {
		fmt.Fprintf(&b, "\x1b[%d;1H", r+1)
		for c := 0; c < cols; c++ {
			fmt.Fprintf(&b, "\x1b[0;%d;38;5;%dm%c", 1+c%9, (r*cols+c)%256, 'A'+rune((r+c)%58))
		}
	}
	s.Write([]byte(b.String()))
	return s
}

func BenchmarkRender(b *testing.B) {
	for _, size := range []struct{ cols, rows int }{{80, 24}, {200, 50}} {
		for _, kind := range []string{"vim", "colour"} {
			var s *screen.Screen
			if kind == "colour" {
				s = colourScreen(size.cols, size.rows)
			} else {
				s = replay(b, "vim-edit")
				s.Resize(size.cols, size.rows)
			}
			b.Run(fmt.Sprintf("%dx%d/%s", size.cols, size.rows, kind), func(b *testing.B) {
				var n int
				for b.Loop() {
					p, err := shot.PNG(s)
					if err != nil {
						b.Fatal(err)
					}
					n = len(p)
				}
				b.ReportMetric(float64(n), "png-bytes")
			})
		}
	}
}
