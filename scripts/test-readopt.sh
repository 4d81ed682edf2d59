#!/bin/sh
# The plain sidecar's end-to-end suite (sidecar/*_test.go) with every host
# going through `ptyplex-sidecar --persist NAME --readopt`, one persistent
# server for two runs in a row: the second run reopens the ids the first
# left behind, as a host's own smoke tests do when they are run again.
# Tests of what only a plain sidecar does (it ends its terminals with its
# host, its own flags) skip themselves (plainOnly in the tests).
#
#   scripts/test-readopt.sh            both runs of the whole suite
#   RUN='TestExit|TestInput' scripts/test-readopt.sh    a part of it
#   ORPHAN_TIMEOUT=60s                 the server's --orphan-timeout
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
work=$(mktemp -d "${TMPDIR:-/tmp}/ptyplex-readopt.XXXXXX")
name=readopt
export PTYPLEX_RUNTIME_DIR="$work/run" PTYPLEX_TEST_PERSIST="$name"
mkdir -m 700 "$PTYPLEX_RUNTIME_DIR"
"$GO" build -race -o "$work/" ./cmd/ptyplex-sidecar
sidecar="$work/ptyplex-sidecar"
finish() {
	"$sidecar" --persist "$name" --stop >/dev/null 2>&1 || true
	# KEEP=DIR keeps the runs' output and the server's log there.
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP" && cp "$work"/run*.log "$PTYPLEX_RUNTIME_DIR/sidecar/$name.log" "$KEEP/" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap finish EXIT
# The server is started here, by a bridge whose host goes at once, not by
# a test: each test binary ends what it started when it ends, and the
# server is to outlive the first run.
"$sidecar" --persist "$name" --orphan-timeout "${ORPHAN_TIMEOUT:-60s}" </dev/null >/dev/null
rc=0
for run in 1 2; do
	echo "--- run $run through --persist $name --readopt (server pid $(pgrep -f "persist $name --serve" | head -1))"
	"$GO" test -race -count=1 ${RUN:+-run "$RUN"} -v ./sidecar/ >"$work/run$run.log" 2>&1 || rc=1
	grep -E '^(--- (FAIL|SKIP)|ok|FAIL)' "$work/run$run.log" | sed 's/^/  /' || true
	echo "  passed: $(grep -c '^--- PASS' "$work/run$run.log")  skipped: $(grep -c '^--- SKIP' "$work/run$run.log")  failed: $(grep -c '^--- FAIL' "$work/run$run.log")"
	[ $rc = 0 ] || grep -E '^\s+(e2e|host|helpers)[a-z_]*\.go:[0-9]+: ' "$work/run$run.log" | cut -c1-300 | head -40
done
echo "--- the server after both runs:"
"$sidecar" --persist "$name" --list || true
exit $rc
