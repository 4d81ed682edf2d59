package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Frame types of the persistent sidecar (`ptyplex-sidecar --persist NAME`,
// see PROTOCOL.md, "Persistent terminals"). They are numbered apart from
// the other extensions and from HELLO (0x10, 0x90) so that each set can
// grow without meeting another. A plain
// sidecar drops them like any unknown type; hosts learn that they are
// served from FeaturePersist in OPENED's features, or from LISTED itself.
const (
	TypeList   Type = 0x20 // host to server: list every terminal
	TypeAttach Type = 0x21 // host to server: take a terminal, replay from an offset
	TypeDetach Type = 0x22 // host to server: let a terminal go without ending it
	TypeStop   Type = 0x23 // host to server: end every terminal and the server
	// TypeUpgrade asks the server to re-execute itself as another binary,
	// keeping its terminals (see PROTOCOL.md, "Live upgrade").
	TypeUpgrade Type = 0x24
	// TypeHandoff, from a bridge (`ptyplex-sidecar --persist NAME`),
	// carries the host's stdin and stdout as SCM_RIGHTS: the server is to
	// read the host's frames from the one and write its own to the other
	// (see PROTOCOL.md, "Descriptor handoff").
	TypeHandoff Type = 0x25
	// TypeRevive asks the server to start a dead terminal's program again
	// (a terminal a previous server ran, found in its --journal-dir): the
	// same command, args, cwd and env, under the same id, the old screen
	// shown first (see PROTOCOL.md, "Journals on disk").
	TypeRevive Type = 0x2c

	TypeListed   Type = 0xa0 // answers LIST
	TypeAttached Type = 0xa1 // answers ATTACH, before the replayed OUTPUT
	TypeSnapshot Type = 0xa2 // a repaint, after ATTACHED when bytes were lost
	TypeDetached Type = 0xa3 // this connection no longer holds the terminal
	// TypeUpgrading answers an UPGRADE the server accepted, right before
	// it re-executes itself; the connection ends with the exec.
	TypeUpgrading Type = 0xa4
	// TypeHandedOff answers a HANDOFF the server took: from now on the
	// host's frames go through the descriptors it carried, and this
	// connection only waits for HOST_ENDED.
	TypeHandedOff Type = 0xa5
	// TypeHostEnded tells the bridge that the server stopped serving the
	// host's descriptors, with the exit status and reason the bridge is
	// to end with; the connection closes after it.
	TypeHostEnded Type = 0xa6
)

// FeaturePersist is listed in OPENED's features by the persistent server.
const FeaturePersist = "persist"

// FeatureUpgrade is listed by a persistent server that serves UPGRADE.
const FeatureUpgrade = "upgrade"

// FeatureHandoff is listed in the HELLO answer of a persistent server that
// takes a host's descriptors (HANDOFF); a bridge hands them over only then.
const FeatureHandoff = "handoff"

// FeatureReadopt, in a host's HELLO to the persistent server, asks that
// an OPEN for the id of a terminal nobody holds give the host that
// terminal (OPENED, a repaint as OUTPUT, then its live output) instead
// of the ERROR "terminal id already exists": for hosts written for the
// plain sidecar, which reopen their ids and know no ATTACH. The bridge
// sends it for --readopt. The server lists it in its own HELLO answer.
const FeatureReadopt = "readopt"

// PersistFeatures is what the persistent server's OPENED announces: the
// plain sidecar's extensions and its own frames.
var PersistFeatures = append(append([]string(nil), Features...), FeaturePersist, FeatureUpgrade)

// PersistHelloFeatures is what its HELLO answer announces: those and the
// keepalive (PING is answered on any connection).
var PersistHelloFeatures = append(append([]string(nil), PersistFeatures...), FeatureKeepalive, FeaturePingNow, FeatureHandoff, FeatureReadopt)

// Detached modes of a persistent terminal (OPEN's "detached").
const (
	DetachedRing = "ring" // keep reading while nobody holds it; the oldest bytes fall out
	DetachedPark = "park" // stop reading when the journal is full; nothing is lost
)

// ListedTerminal is one entry of LISTED.
type ListedTerminal struct {
	Args     []string `json:"args,omitempty"`
	Attached bool     `json:"attached"`
	Cmd      string   `json:"cmd"`
	Cols     uint16   `json:"cols"`
	Detached string   `json:"detached"`
	// ExitCode and Signal are set once the child has exited (Exited).
	ExitCode *int `json:"exitCode,omitempty"`
	Exited   bool `json:"exited"`
	// HoldGen is the holder generation of its latest holder (the one
	// that holds it, if one does): see Attached.HoldGen. Absent when no
	// connection of this server (or of those it was upgraded from) held
	// it, as for a terminal recovered after a crash.
	HoldGen  uint64 `json:"holdGen,omitempty"`
	PID      int    `json:"pid"`
	Produced uint64 `json:"produced"` // bytes produced since OPEN
	Rows     uint16 `json:"rows"`
	Signal   string `json:"signal,omitempty"`
	// Start is the offset of the oldest byte the journal still holds;
	// the journal covers [start, produced).
	Start      uint64 `json:"start"`
	TerminalID string `json:"terminalId"`
	// DropInMs is set for an exited terminal that nobody holds: the
	// milliseconds left before the server drops it (--keep-exited,
	// counted from its latest detach). Absent while it is held or runs.
	DropInMs *int64 `json:"dropInMs,omitempty"`
	// OrphanInMs is set for a running terminal that nobody holds: the
	// milliseconds left before the server closes it as CLOSE does (the
	// orphan timeout, counted from its latest detach). Absent while it
	// is held, when it has no orphan timeout, and once it exited.
	OrphanInMs *int64 `json:"orphanInMs,omitempty"`
	// Viewers are the connections that view the terminal (ATTACH with
	// "mode":"view"), in the order they attached; absent when none do.
	Viewers []ListedViewer `json:"viewers,omitempty"`
	// Dead is set for a terminal a previous server ran, recovered from
	// its --journal-dir after that server died (a crash, a reboot): its
	// bytes can be read with ATTACH, its program started again with
	// REVIVE. A dead terminal is also Exited; ExitCode and Signal are
	// set only if the exit was recorded before the server died.
	Dead bool `json:"dead,omitempty"`
	// CrashLost is set for a dead terminal: how many bytes its program
	// had written past Produced that its server read and then died
	// before its files held them (the read in flight, a record the
	// crash tore; a full disk's share, when the files had stopped). The
	// bytes the kernel still held for the PTY, never read, are not in
	// it. Absent when none were lost so, and in the files of servers
	// older than the count.
	CrashLost uint64 `json:"crashLost,omitempty"`
	// JournalDirError is set, under --journal-dir, for a terminal whose
	// output is no longer written to the directory (or never was): why
	// (a full disk, say). The terminal runs on, its journal in memory
	// whole; what it writes from then on would not survive a crash of
	// the server, until the disk has room again and the server writes
	// the journal there anew (then the field is gone).
	JournalDirError string `json:"journalDirError,omitempty"`
	// Closing is set while the terminal's program is being closed (a
	// CLOSE, or the orphan bound): it was sent SIGHUP, and SIGKILL
	// follows at the end of the grace period unless it exits before.
	// Absent otherwise, and once it exited.
	Closing bool `json:"closing,omitempty"`
}

// Listed is the body of LISTED.
type Listed struct {
	Terminals []ListedTerminal `json:"terminals"`
}

// Attach is the body of ATTACH. Credit nil means unthrottled. The server
// parses it more strictly than encoding/json would (whole numbers only).
type Attach struct {
	Credit *uint64 `json:"credit,omitempty"`
	// Mode is AttachView for a viewer; "" (or AttachHold) takes the
	// terminal as its holder, as an ATTACH without it always did.
	Mode   string `json:"mode,omitempty"`
	Offset uint64 `json:"offset"`
	// Resume, in a holder's ATTACH, is the holder generation (HoldGen)
	// this host was given when it last held the terminal: it takes the
	// terminal back only if no other connection became its holder since
	// (the server refuses it otherwise). nil: takes it in any case, as
	// an ATTACH without it always did. A viewer's ATTACH ignores it.
	Resume     *uint64 `json:"resume,omitempty"`
	TerminalID string  `json:"terminalId"`
}

// Attached is the body of ATTACHED. Offset is the offset the host asked
// for; Lost is how many of the bytes from there fell out of the journal.
type Attached struct {
	// CrashLost is a dead terminal's ListedTerminal.CrashLost: bytes
	// after the last one replayed that the files never held.
	CrashLost uint64 `json:"crashLost,omitempty"`
	// HoldGen is the holder generation this connection holds the
	// terminal at (in a holder's ATTACHED, and in the one a viewer gets
	// when handed the terminal); an ATTACH's "resume" names it. Absent
	// in a viewer's ATTACHED.
	HoldGen uint64 `json:"holdGen,omitempty"`
	Lost    uint64 `json:"lost"`
	// Mode is AttachView in a viewer's ATTACHED, and AttachHold in the
	// one a viewer gets when the holder hands the terminal over to it;
	// absent in the answer to a holder's ATTACH (as before viewers).
	Mode       string `json:"mode,omitempty"`
	Offset     uint64 `json:"offset"`
	TerminalID string `json:"terminalId"`
	// Viewer is the viewer's number on this server (a holder hands over
	// to it by that number); absent for a holder.
	Viewer uint64 `json:"viewer,omitempty"`
}

// Snapshot is the body of SNAPSHOT: Data repaints the screen and the
// scrollback the journal covers, and OUTPUT continues from Offset.
type Snapshot struct {
	Cols uint16 `json:"cols"`
	Data string `json:"data"`
	// Lost is set in a viewer's SNAPSHOT: how many bytes, from the
	// offset it was at, it was skipped past (they left the journal
	// before it read them). Absent in a holder's (ATTACHED says it).
	Lost       uint64 `json:"lost,omitempty"`
	Offset     uint64 `json:"offset"`
	Rows       uint16 `json:"rows"`
	TerminalID string `json:"terminalId"`
}

// Detached is the body of DETACHED.
type Detached struct {
	Reason     string `json:"reason"`
	TerminalID string `json:"terminalId"`
}

// Revive is the body of REVIVE: the dead terminal to start again, and
// the new terminal's credit as in OPEN (nil: unthrottled).
type Revive struct {
	Credit     *uint64 `json:"credit,omitempty"`
	TerminalID string  `json:"terminalId"`
}

// Upgrade is the body of UPGRADE: Path is the absolute path of the binary
// the server is to become; Version is the upgrader's own version, for the
// server's log (the server asks the binary itself what it is).
type Upgrade struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// Upgrading is the body of UPGRADING: how many terminals are handed over,
// and the versions of the old and the new binary.
type Upgrading struct {
	From      string `json:"from"`
	Terminals int    `json:"terminals"`
	To        string `json:"to"`
}

// HostEnded is the body of HOST_ENDED: Code is the exit status the bridge
// ends with, Reason (for a status other than 0) the line it writes on
// stderr, as a bridge that copies would.
type HostEnded struct {
	Code   int    `json:"code"`
	Reason string `json:"reason,omitempty"`
}

// ParseCount reads a JSON whole number of bytes strictly: no sign, no
// fraction, no exponent, no quotes (encoding/json would take 1e3 or
// round 1.5 into a uint64 field's neighbourhood).
func ParseCount(raw json.RawMessage) (uint64, error) {
	r := bytes.TrimSpace(raw)
	if len(r) == 0 {
		return 0, errors.New("missing")
	}
	for _, b := range r {
		if b < '0' || b > '9' {
			return 0, fmt.Errorf("%s is not a whole number of bytes", r)
		}
	}
	n, err := strconv.ParseUint(string(r), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is out of range", r)
	}
	return n, nil
}

// ParseAttach decodes ATTACH strictly (see ParseCount). On an error, id is
// the terminal id to address the refusal to (what the body names, as far
// as it could be read).
func ParseAttach(body []byte) (a Attach, id string, err error) {
	var w struct {
		TerminalID *string         `json:"terminalId"`
		Offset     json.RawMessage `json:"offset"`
		Credit     json.RawMessage `json:"credit"`
		Mode       json.RawMessage `json:"mode"`
		Resume     json.RawMessage `json:"resume"`
	}
	if err := unmarshalExact(body, &w); err != nil || w.TerminalID == nil {
		return a, RecoverID(body), errors.New(`malformed ATTACH: want {"terminalId": ..., "offset": N}`)
	}
	a.TerminalID = *w.TerminalID
	if a.Offset, err = ParseCount(w.Offset); err != nil {
		return a, a.TerminalID, fmt.Errorf("malformed ATTACH: offset: %v (the count of bytes already received, 0 or more)", err)
	}
	if len(w.Credit) > 0 && string(w.Credit) != "null" {
		n, err := ParseCount(w.Credit)
		if err != nil {
			return a, a.TerminalID, fmt.Errorf("malformed ATTACH: credit: %v", err)
		}
		a.Credit = &n
	}
	if a.Mode, err = parseAttachMode(w.Mode); err != nil {
		return a, a.TerminalID, err
	}
	if len(w.Resume) > 0 && string(w.Resume) != "null" {
		n, err := ParseCount(w.Resume)
		if err != nil {
			return a, a.TerminalID, fmt.Errorf("malformed ATTACH: resume: %v (the holdGen of this host's last ATTACHED or OPENED for the terminal)", err)
		}
		a.Resume = &n
	}
	return a, a.TerminalID, nil
}

// OpenPersist is the part of OPEN only the persistent server reads: the
// journal's size (0: the server's default) and the detached mode.
type OpenPersist struct {
	Journal uint64
	Park    bool
	// OrphanMs is OPEN's "orphanMs": how long the terminal may go
	// without a holder before the server closes it, in milliseconds;
	// 0 (or absent): the server's --orphan-timeout; OrphanNever: never.
	OrphanMs int64
}

// OrphanNever is the "orphanMs" of a terminal that is never closed for
// having no holder.
const OrphanNever = -1

// maxOrphanMs bounds "orphanMs": about 292 years, what a time.Duration
// holds.
const maxOrphanMs = 1<<63/1_000_000 - 1

// Persist validates OPEN's persistent fields, which only the persistent
// server reads (the plain sidecar ignores them): a journal must be
// 1..maxJournal bytes, detached "ring" or "park". A detached that is not
// a JSON string is ignored, as it always was.
func (o OpenRequest) Persist(maxJournal uint64) (OpenPersist, error) {
	var p OpenPersist
	if len(o.journal) > 0 && string(o.journal) != "null" {
		n, err := ParseCount(o.journal)
		if err != nil || n < 1 || n > maxJournal {
			return p, fmt.Errorf("malformed OPEN: journal must be a whole number of bytes in 1..%d, not %s", maxJournal, o.journal)
		}
		p.Journal = n
	}
	var detached *string
	if json.Unmarshal(o.detached, &detached) == nil && detached != nil {
		switch *detached {
		case DetachedRing:
		case DetachedPark:
			p.Park = true
		default:
			return p, fmt.Errorf("malformed OPEN: detached must be %q or %q, not %q", DetachedRing, DetachedPark, *detached)
		}
	}
	if r := bytes.TrimSpace(o.orphan); len(r) > 0 && string(r) != "null" {
		if string(r) == "-1" {
			p.OrphanMs = OrphanNever
		} else if n, err := ParseCount(r); err != nil || n > maxOrphanMs {
			return p, fmt.Errorf("malformed OPEN: orphanMs must be -1 (never) or a whole number of milliseconds (0: the server's default), not %s", r)
		} else {
			p.OrphanMs = int64(n)
		}
	}
	return p, nil
}
