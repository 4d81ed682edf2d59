#!/usr/bin/env bash
# scripts/leftovers.sh TOKEN: fail when processes of a test run are still
# running after it. `make test` marks everything it starts with TOKEN in
# PTYPLEX_TEST_OWNER (inherited by every child, including daemons that
# detach into their own sessions; internal/testing/testproc adds a token per test
# binary). Processes still shutting down get a few seconds; the rest are
# listed, killed, and the run fails. Without /proc there is nothing to do.
set -uo pipefail
tok=${1:?usage: leftovers.sh TOKEN}
# We must not carry the mark ourselves: /proc/PID/environ shows the
# environment a process was started with, so unsetting it is not enough
# (this script and its subshells would still match, and kill themselves).
# Start again without it.
if [ -n "${PTYPLEX_TEST_OWNER+x}" ]; then
	exec env -u PTYPLEX_TEST_OWNER bash "$0" "$@"
fi
[ -r /proc/self/environ ] || exit 0

case $tok in *[!A-Za-z0-9_-]*) echo "leftovers: bad token $tok" >&2; exit 2 ;; esac

# Our own ancestors carry the mark when a failing step runs us (make's
# recipe shell, `cmd || { leftovers.sh TOKEN; exit 1; }`): they are the run
# itself, still finishing, not what it left, and killing them would turn
# the step's exit 1 into make's "Killed".
ancestors=" "
p=$$
while [ "$p" -gt 1 ] 2>/dev/null; do
	ancestors+="$p "
	p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || break
done

scan() {
	local p
	for p in $(grep -lzsE "^PTYPLEX_TEST_OWNER=(.* )?$tok( .*)?\$" /proc/[0-9]*/environ | sed 's|^/proc/||; s|/environ$||'); do
		case $ancestors in *" $p "*) ;; *) echo "$p" ;; esac
	done
}

left=$(scan)
for _ in $(seq 50); do
	[ -z "$left" ] && exit 0
	sleep 0.1
	left=$(scan)
done
echo "leftovers: these processes of the test run are still running after it (killing them):" >&2
for p in $left; do
	echo "  $(ps -o pid=,ppid=,etime=,args= -p "$p" 2>/dev/null || echo "$p (gone)")" >&2
done
for p in $left; do kill -KILL "$p" 2>/dev/null; done
exit 1
