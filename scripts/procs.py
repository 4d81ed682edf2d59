#!/usr/bin/env python3
"""How many Ps the sidecar should run with, measured.

Runs ptyplex-bench's six throughput rows (raw and cooked; 1, 16 and 64
terminals) with the sidecar's GOMAXPROCS at 1, the CPU count and twice it,
ROUNDS times, rotating which setting goes first in each round so that a
machine's drifting load falls on every setting alike. Each row's figure is
its ratio against plain read(2) measured in the same bench run, so noise
common to both sides cancels. Prints one Markdown table: per setting and row
the median of the rounds' ratios (min-max), and per setting its worst row,
by which the default is chosen.

Usage: scripts/procs.py [ROUNDS] [extra ptyplex-bench flags...]
(make build first; `make procs` does both).
"""
import os
import re
import statistics
import subprocess
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
extra = sys.argv[2:] or ["-runs", "3", "-mib", "32"]
ncpu = os.cpu_count() or 1
settings = sorted({1, ncpu, 2 * ncpu})
line = re.compile(r"\| Throughput, (\d+) terminals?, (raw|cooked) .*\| ([0-9.]+) \([0-9.]+–[0-9.]+\) \|[^|]*\|$")

ratios = {}  # (procs, terminals, mode) -> [ratio per round]
failures = []
names = [f"throughput {mode} ×{n}" for n in (1, 16, 64) for mode in ("raw", "cooked")]


def bench(procs, name):
    """One row's bench run; a failed run is retried once, then reported."""
    for attempt in (1, 2):
        p = subprocess.run(
            ["bin/ptyplex-bench", "-sidecar", "bin/ptyplex-sidecar", "-only", f"^{name}$",
             "-sidecar-env", f"GOMAXPROCS={procs}", *extra],
            capture_output=True, text=True)
        if p.returncode == 0 or line.search(p.stdout or ""):
            return p.stdout
        err = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["?"]
        failures.append(f"GOMAXPROCS={procs} {name} (try {attempt}): {err[0]}")
    return ""


for r in range(rounds):
    order = settings[r % len(settings):] + settings[:r % len(settings)]
    for procs in order:
        for name in names:
            for l in bench(procs, name).splitlines():
                m = line.match(l)
                if m:
                    key = (procs, int(m.group(1)), m.group(2))
                    ratios.setdefault(key, []).append(float(m.group(3)))
        print(f"round {r + 1}/{rounds}, GOMAXPROCS={procs} done", file=sys.stderr)

cols = [(n, mode) for n in (1, 16, 64) for mode in ("raw", "cooked")]
print(f"{rounds} rounds on {ncpu} CPUs; ratio of the sidecar to plain read(2), median (min–max)\n")
print("| GOMAXPROCS | " + " | ".join(f"{n} {mode}" for n, mode in cols) + " | worst row |")
print("|---" * (len(cols) + 2) + "|")
best = None
for procs in settings:
    cells, medians = [], []
    for n, mode in cols:
        v = ratios.get((procs, n, mode), [])
        if not v:
            cells.append("–")
            continue
        med = statistics.median(v)
        medians.append(med)
        cells.append(f"{med:.2f} ({min(v):.2f}–{max(v):.2f})")
    worst = min(medians) if medians else 0
    label = f"{procs}" + (" (CPUs)" if procs == ncpu else " (2×CPUs)" if procs == 2 * ncpu else "")
    print(f"| {label} | " + " | ".join(cells) + f" | {worst:.2f} |")
    if best is None or worst > best[1]:
        best = (procs, worst)
print(f"\nBy the worst row: GOMAXPROCS={best[0]} ({best[1]:.2f}).")
for f in failures:
    print(f"- failed: {f}")
