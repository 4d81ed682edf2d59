#!/usr/bin/env bash
# make stress: every package's tests repeated under the race detector while
# one busy loop per core competes for the CPU, the conditions in which
# timing assumptions in tests break. A test that fails here fails CI some
# day: fix its cause, not its timeout.
#
#   STRESS_COUNT  rounds of every package (go test -count), default 5
#   STRESS_PKGS   packages, default ./...
#   PTYPLEX_SIDECAR_ROUNDS  sidecars per round of soak's restart test
#                 (default there 500; 50 here, since the rounds repeat it)
set -euo pipefail
cd "$(dirname "$0")/.."

count=${STRESS_COUNT:-5}
pkgs=${STRESS_PKGS:-./...}
export PTYPLEX_SIDECAR_ROUNDS=${PTYPLEX_SIDECAR_ROUNDS:-50}

# Everything the rounds start carries this mark (internal/testing/testproc);
# scripts/leftovers.sh fails the run if any of it outlives the rounds.
run="st$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
export PTYPLEX_TEST_OWNER="${PTYPLEX_TEST_OWNER:+$PTYPLEX_TEST_OWNER }$run"
export GORACE="${GORACE:-atexit_sleep_ms=20}"

hogs=()
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
for _ in $(seq "$(nproc)"); do
	# Each loop also ends once this script is gone (looked at every
	# 100,000 turns), so a killed stress run leaves no loop spinning.
	PTYPLEX_TEST_OWNER= sh -c 'p=$PPID; i=0; while :; do i=$((i+1)); [ $((i % 100000)) -ne 0 ] || kill -0 "$p" 2>/dev/null || exit 0; done' &
	hogs+=($!)
done

echo "stress: $count rounds of $pkgs under -race beside ${#hogs[@]} busy loops"
start=$(date +%s)
status=0
# -timeout 0: rounds under load take long, and the tests' own deadlines
# bound every wait.
go test -race -count="$count" -timeout 0 $pkgs || status=$?
echo "stress: $count rounds in $(( $(date +%s) - start ))s: $([ $status -eq 0 ] && echo '0 failures' || echo FAILED)"
stop_hogs
scripts/leftovers.sh "$run" || status=1
exit $status
