//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		make   func(p string) error
		reason string
	}{
		{"symlink", func(p string) error { return os.Symlink(target, p) }, "symbolic link"},
		{"dangling symlink", func(p string) error { return os.Symlink(filepath.Join(dir, "nothing"), p) }, "symbolic link"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "FIFO"},
		{"hard link", func(p string) error { return os.Link(target, p) }, "2 hard links"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			if err := c.make(p); err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(string) (*os.File, error){OpenAppend, Create} {
				f, err := open(p)
				if err == nil {
					f.Close()
					t.Fatalf("%s was opened", c.name)
				}
				var re *RefusedError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), c.reason) {
					t.Errorf("error %q (%T) does not say %q", err, err, c.reason)
				}
			}
			err := WriteWhole(p, []byte("new"))
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("WriteWhole: error %q (%T) does not say %q", err, err, c.reason)
			}
			if b, _ := os.ReadFile(target); string(b) != "keep" {
				t.Errorf("target changed to %q", b)
			}
		})
	}
}

func TestCreateAndAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := OpenAppend(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("one ")
	f.Close()
	f, _ = OpenAppend(p)
	f.WriteString("two")
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "one two" {
		t.Errorf("after two appends: %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	f, err = Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("after Create: %q", b)
	}
}

// A file of ours that others may read or write (the usual umask's 0644,
// 0664 under umask 002) is made private and then written, keeping what
// it held; Exposed says so beforehand.
func TestExposedFileIsMadePrivate(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o664, 0o640, 0o620, 0o604} {
		for name, open := range map[string]func(string) (*os.File, error){"OpenAppend": OpenAppend, "Create": Create} {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, []byte("old "), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, mode)
			if m, ok := Exposed(p); !ok || m != mode {
				t.Errorf("%v: Exposed = %v, %t", mode, m, ok)
			}
			f, err := open(p)
			if err != nil {
				t.Fatalf("%s of a %v file: %v", name, mode, err)
			}
			f.WriteString("new")
			f.Close()
			if fi, _ := os.Stat(p); fi.Mode() != 0o600 {
				t.Errorf("%s of a %v file left it %v, want -rw-------", name, mode, fi.Mode())
			}
			want := map[string]string{"OpenAppend": "old new", "Create": "new"}[name]
			if b, _ := os.ReadFile(p); string(b) != want {
				t.Errorf("%s of a %v file: it holds %q, want %q", name, mode, b, want)
			}
			if _, ok := Exposed(p); ok {
				t.Errorf("%v: still exposed after %s", mode, name)
			}
		}
	}
	if _, ok := Exposed(filepath.Join(t.TempDir(), "none")); ok {
		t.Error("a missing file is exposed")
	}
	f, err := OpenAppend(os.DevNull)
	if err != nil {
		t.Fatalf("%s: %v", os.DevNull, err)
	}
	f.Close()
}

// /dev/null is accepted as it is by every way of opening a file, Create
// included (truncating a device fails, and --record /dev/null did).
func TestDevNullAccepted(t *testing.T) {
	for name, open := range map[string]func(string) (*os.File, error){"OpenAppend": OpenAppend, "Create": Create} {
		f, err := open(os.DevNull)
		if err != nil {
			t.Errorf("%s(%s): %v", name, os.DevNull, err)
			continue
		}
		if _, err := f.WriteString("thrown away"); err != nil {
			t.Errorf("%s(%s): write: %v", name, os.DevNull, err)
		}
		f.Close()
	}
	if err := WriteWhole(os.DevNull, []byte("thrown away")); err != nil {
		t.Errorf("WriteWhole(%s): %v", os.DevNull, err)
	}
}

// Exposed says a file will be made private only when the open would do
// that, not for a 0644 file the open refuses (here one with a second
// name): the caller prints what Exposed says before it opens.
func TestExposedNotForARefusedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o644)
	if err := os.Link(p, filepath.Join(dir, "second")); err != nil {
		t.Fatal(err)
	}
	if m, ok := Exposed(p); ok {
		t.Errorf("Exposed = %v, true for a file with two names, which the open refuses", m)
	}
	if f, err := OpenAppend(p); err == nil {
		f.Close()
		t.Fatal("a file with two names was opened")
	}
	if fi, _ := os.Stat(p); fi.Mode() != 0o644 {
		t.Errorf("the refused file's mode became %v", fi.Mode())
	}
}
