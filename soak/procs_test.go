package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procStat returns the fields of /proc/PID/stat after the command name
// (state, ppid, pgrp, session, ...), or nil when pid is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// children lists the live (non-zombie) children of pid.
func children(pid int) []int { return childrenOf(pid, false) }

// childrenAll lists the children of pid, zombies included.
func childrenAll(pid int) []int { return childrenOf(pid, true) }

func childrenOf(pid int, zombies bool) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	want := strconv.Itoa(pid)
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(p); len(f) > 1 && f[1] == want && (zombies || f[0] != "Z") {
			out = append(out, p)
		}
	}
	return out
}

// inSessions lists the live processes whose session id is in sids.
func inSessions(sids map[int]bool) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := procStat(p)
		if len(f) < 4 || f[0] == "Z" {
			continue
		}
		if sid, _ := strconv.Atoi(f[3]); sids[sid] {
			out = append(out, fmt.Sprintf("%d (%s, session %d)", p, cmdline(p), sid))
		}
	}
	return out
}

func countFDs(pid int) int {
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return len(ents)
}

func threads(pid int) int {
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	return len(ents)
}

func statusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// eventually polls cond until it holds or d passes. It is for states that
// no event announces (a count in /proc settling); the poll interval is
// short and the deadline generous.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
