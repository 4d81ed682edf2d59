//go:build darwin || freebsd

package ptyhost

// ForbidInspection does nothing here: macOS and FreeBSD have no /proc file
// descriptors to reopen, and their debugging controls (PT_DENY_ATTACH,
// procctl) are left alone.
func ForbidInspection() error { return nil }
