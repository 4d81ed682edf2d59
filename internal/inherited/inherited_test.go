//go:build unix

package inherited

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestClose closes a descriptor without close-on-exec (as one inherited
// from a parent is) and leaves close-on-exec ones and kept ones alone.
func TestClose(t *testing.T) {
	r, w, err := os.Pipe() // both close-on-exec, as Go opens everything
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	inh, err := unix.Dup(int(w.Fd())) // dup(2) clears close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	kept, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(kept)
	closed, err := Close(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(closed, inh) {
		t.Errorf("fd %d (not close-on-exec) was not closed; closed %v", inh, closed)
	}
	if slices.Contains(closed, kept) || slices.Contains(closed, int(r.Fd())) {
		t.Errorf("closed %v, which includes a kept or close-on-exec descriptor", closed)
	}
	if _, err := unix.FcntlInt(uintptr(kept), unix.F_GETFD, 0); err != nil {
		t.Errorf("kept fd %d: %v", kept, err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Errorf("the close-on-exec original stopped working: %v", err)
	}
}
