//go:build unix

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// register writes the daemon's record; a failure only costs the session
// its place in `list`, so callers may ignore it.
func (d *Daemon) register() error {
	dir, err := wire.RegistryDir()
	if err != nil {
		return err
	}
	rec := wire.Record{
		Socket: d.sock, PID: os.Getpid(), ChildPID: d.proc.Pid(),
		Command: d.cfg.Command, Started: time.Now(), Auto: d.autoDir != "",
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%d-*.json", os.Getpid()))
	if err != nil {
		return fmt.Errorf("session registry: %w", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("session registry: %w", err)
	}
	d.regFile = f.Name()
	return nil
}

// unregister removes the daemon's record.
func (d *Daemon) unregister() {
	if d.regFile != "" {
		os.Remove(d.regFile)
	}
}
