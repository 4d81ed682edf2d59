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
		{"group-writable", func(p string) error {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o620)
		}, "other users may write it (mode 0620)"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "directory"},
		{"readable by all", func(p string) error {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o644)
		}, "other users may read it (mode 0644)"},
		{"group-readable", func(p string) error {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o640)
		}, "other users may read it (mode 0640)"},
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
