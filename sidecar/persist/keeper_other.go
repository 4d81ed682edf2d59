//go:build unix && !linux

package persist

import (
	"errors"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// Without /proc/PID/fd there is no window to close here: an upgrade
// hands its descriptors over by inheritance, and no keeper is started.

// KeeperFlag is the hidden flag of the keeper (Linux only).
const KeeperFlag = "--persist-keeper"

const keepers = false

// IsKeeper is false: there are no keepers here.
func IsKeeper([]string) bool { return false }

// Keep is not available here.
func Keep() int { return 2 }

type keeper struct{ fd int }

func startKeeper(func(string, ...any)) (*keeper, error) {
	return nil, errors.New("no keeper on this platform")
}

func (k *keeper) give([]string, []int) error { return errors.New("no keeper on this platform") }
func (k *keeper) stop()                      {}
func (k *keeper) watch([]ptyhost.Identity) error {
	return errors.New("no keeper on this platform")
}

// Reclaimed is what a new image got back from a keeper (Linux only).
type Reclaimed struct{ FDs map[string]int }

// Reclaim is not available here.
func Reclaim(int) (*Reclaimed, error) { return nil, errors.New("no keeper on this platform") }

func (r *Reclaimed) Release() {}
func (r *Reclaimed) Drop()    {}
