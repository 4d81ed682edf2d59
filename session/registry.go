//go:build unix

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// register writes the daemon's record; a failure only costs the session
// its place in `list`. dirOK tells whether the registry directory itself
// could be used (list fails without it).
func (d *Daemon) register() (dirOK bool, err error) {
	dir, err := wire.RegistryDir()
	if err != nil {
		return false, err
	}
	// The record names the socket absolutely, for a list run elsewhere
	// (a path too long to connect to is shown as unreachable there).
	sock, err := filepath.Abs(d.sock)
	if err != nil {
		return true, err
	}
	rec := wire.Record{
		Socket: sock, PID: os.Getpid(), ChildPID: d.proc.Pid(),
		Command: d.cfg.Command, Started: time.Now(), Auto: d.autoDir != "",
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return true, err
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%d-*.json", os.Getpid()))
	if err != nil {
		return true, recordError(dir, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return true, recordError(dir, err)
	}
	d.regFile = f.Name()
	return true, nil
}

// recordError says that the record could not be written in dir, and why;
// the file's own name (random, and removed again) would tell nothing.
func recordError(dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("session registry: cannot write this session's record in %s: %w", dir, err)
}

// unregister removes the daemon's record.
func (d *Daemon) unregister() {
	if d.regFile != "" {
		os.Remove(d.regFile)
	}
}
