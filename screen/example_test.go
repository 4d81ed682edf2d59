package screen_test

import (
	"fmt"

	"github.com/ptyplex/ptyplex/screen"
)

func Example() {
	s := screen.New(20, 3, screen.Options{})
	// What a program writes to its PTY: colour, a cursor query, a title.
	s.Write([]byte("\x1b]2;demo\x07plain \x1b[1;31mred\x1b[0m\r\n中文\x1b[6n"))

	fmt.Printf("%q\n", s.Line(1, false))
	fmt.Printf("%q\n", s.Line(1, true))
	fmt.Printf("%q\n", s.Line(2, false))
	fmt.Printf("reply %q, title %q\n", s.TakeReplies(), s.Title())
	row, col := s.Cursor()
	fmt.Println("cursor", row, col)
	// Output:
	// "plain red"
	// "plain \x1b[1;31mred\x1b[0m"
	// "中文"
	// reply "\x1b[2;5R", title "demo"
	// cursor 1 4
}

func ExampleScreen_Unhandled() {
	s := screen.New(20, 3, screen.Options{Unhandled: 2})
	s.Write([]byte("\x1b[?1234h\x1b[?25l"))
	seqs, dropped := s.Unhandled()
	for _, u := range seqs {
		fmt.Println(u.Sequence, u.RawHex)
	}
	fmt.Println("dropped", dropped)
	// Output:
	// \e[?1234h 1b5b3f3132333468
	// dropped 0
}
