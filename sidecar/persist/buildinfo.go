//go:build unix

package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime/debug"
)

// readBuildInfo returns the build information the Go linker writes into
// every binary (what debug/buildinfo.Read returns), from the bytes of a
// whole executable file.
//
// Why not debug/buildinfo: it reads each executable format through
// debug/elf, debug/macho, debug/pe, debug/dwarf and their decompressors,
// which made the server's binary 370 KiB larger, all of it resident
// (docs/persist.md, the flooding RSS), to find one blob that its magic
// finds as well.
//
// The blob, as the linker writes it since Go 1.18: at a 16-byte aligned
// offset, a 14-byte magic, a byte of pointer size, a byte of flags (2:
// the strings follow inline), padding to 32 bytes; then the Go version
// and the module information, each a uvarint length and its bytes, the
// module information framed by 16 bytes at each end. Older binaries
// (pointers to the strings instead) cannot take a server over anyway.
func readBuildInfo(data []byte) (*debug.BuildInfo, error) {
	if !executable(data) {
		return nil, errors.New("not an ELF or Mach-O executable")
	}
	const align = 16
	magic := []byte("\xff Go buildinf:")
	for off := 0; ; {
		i := bytes.Index(data[off:], magic)
		if i < 0 {
			return nil, errors.New("no Go build information")
		}
		at := off + i
		off = at + 1
		if at%align != 0 {
			continue
		}
		if info, ok := buildInfoAt(data[at:]); ok {
			return info, nil
		}
	}
}

// buildInfoAt parses the blob b starts with; false if it is not one.
func buildInfoAt(b []byte) (*debug.BuildInfo, bool) {
	const header, flagsAt, inline = 32, 15, 2
	if len(b) < header || b[flagsAt]&inline == 0 {
		return nil, false
	}
	version, rest, ok := uvarintBytes(b[header:])
	if !ok {
		return nil, false
	}
	mod, _, ok := uvarintBytes(rest)
	if !ok || len(mod) < 33 || mod[len(mod)-17] != '\n' {
		return nil, false
	}
	info, err := debug.ParseBuildInfo(string(mod[16 : len(mod)-16]))
	if err != nil {
		return nil, false
	}
	info.GoVersion = string(version)
	return info, true
}

// uvarintBytes splits off the uvarint-length-prefixed bytes b starts with.
func uvarintBytes(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// executable says whether data starts as an ELF or a Mach-O file does.
func executable(data []byte) bool {
	if bytes.HasPrefix(data, []byte("\x7fELF")) {
		return true
	}
	if len(data) < 4 {
		return false
	}
	switch binary.BigEndian.Uint32(data) {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe:
		return true
	}
	return false
}
