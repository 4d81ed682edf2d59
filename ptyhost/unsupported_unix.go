//go:build unix

package ptyhost

import "errors"

// ErrNotSupported answers a request the platform has no meaning for. The
// Unix backends have none such today; the Windows backend answers it for
// signals without a Windows counterpart and for foreground process groups.
var ErrNotSupported = errors.New("not supported on this platform")
