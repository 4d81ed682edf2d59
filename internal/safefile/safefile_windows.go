package safefile

import (
	"fmt"
	"io/fs"
	"os"
)

// RefusedError says why a path was not opened.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refusing to write to %s: %s", e.Path, e.Reason)
}

// On Windows the planted-file attacks of the Unix version take a symbolic
// link or junction (a reparse point) or a file that is not a plain one;
// both are refused. Files are created with the directory's inherited
// ACL, which in a user's profile (where %TEMP% is) is the user's alone.

// OpenAppend opens path for appending, creating it when it does not exist.
func OpenAppend(path string) (*os.File, error) { return open(path, os.O_APPEND) }

// Exposed is the Unix check for a file that opening makes private; files
// here keep their ACL, so none is.
func Exposed(path string) (fs.FileMode, bool) { return 0, false }

// Create opens path for writing from the start, creating it or truncating
// it; a refused path is left as it was.
func Create(path string) (*os.File, error) {
	f, err := open(path, 0)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate %s: %w", path, err)
	}
	return f, nil
}

func open(path string, extra int) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if err := check(path, fi); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|extra, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = check(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func check(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || fi.Mode()&fs.ModeIrregular != 0:
		return &RefusedError{Path: path, Reason: "it is a link or reparse point"}
	case !fi.Mode().IsRegular():
		return &RefusedError{Path: path, Reason: "it is not a regular file"}
	}
	return nil
}
