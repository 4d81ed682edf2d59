#!/usr/bin/env bash
# first-use.sh: a new user's first steps, as the docs write them. On a
# fresh clone of this checkout's HEAD, runs every code block fenced
# ```sh norun first-use in README.md, node/README.md and docs/remote.md,
# in that order, in one bash (-eu -o pipefail), each from the clone's top
# directory (a block that repeats an earlier one word for word runs once).
# The blocks name the user's own module and project as the sibling
# directories ../myhost and ../myproject, and the remote machine as the
# ssh host build-box: this script makes those (a Go main that imports the
# client, an empty npm project, an sshd of its own on 127.0.0.1 with a
# home directory of its own, reached as build-box through an ssh on the
# steps' PATH that adds the host's config), then checks what the steps
# promise: the Go host builds and runs a terminal, the installed npm
# package runs one with its bundled sidecar, ptyplex, ptyplex-sidecar and
# the npm package name the same version and commit, and ssh build-box
# ptyplex runs the installed ptyplex from the remote PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/ptyplex"
clone="$work/ptyplex"

# The user's module: the README's Go example as a program.
mkdir "$work/myhost"
(cd "$work/myhost" && go mod init example.com/myhost >/dev/null 2>&1)
cat >"$work/myhost/main.go" <<'GO'
package main

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/ptyplex/ptyplex/client"
)

func main() {
	c, err := client.Start(client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	term, err := c.Open(context.Background(), client.OpenOptions{Cmd: "sh", Args: []string{"-c", "echo hi; exit 3"}})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := io.ReadAll(term)
	status, _ := term.Wait()
	fmt.Printf("%q %d\n", out, status.Code)
}
GO
mkdir "$work/myproject"
echo '{"name":"myproject","private":true}' >"$work/myproject/package.json"

# build-box: sshd on 127.0.0.1 with generated keys. Its sessions get a home
# of their own (what remote install and the links write stays in $work)
# and a PATH without this checkout's bin/, so that the remote ptyplex is
# the one the steps link into ~/bin.
sshd=/usr/sbin/sshd
[ -x "$sshd" ] || { echo "first-use: docs/remote.md's steps need $sshd (make test-deps installs it)" >&2; exit 1; }
box="$work/build-box"
mkdir -p "$box/home" "$box/client"
ssh-keygen -q -t ed25519 -N '' -f "$box/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$box/user_key"
remote_path="$box/home/bin:/usr/local/bin:/usr/bin:/bin"
sshd_pid=
trap '[ -z "$sshd_pid" ] || kill "$sshd_pid" 2>/dev/null; rm -rf "$work"' EXIT
for attempt in 1 2 3; do
	# A free port; another process may take it before sshd binds it, so
	# a start that fails is tried again on another.
	port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
	printf '%s\n' "Port $port" "ListenAddress 127.0.0.1" "HostKey $box/host_key" \
		"AuthorizedKeysFile $box/user_key.pub" "PidFile $box/sshd.pid" "PasswordAuthentication no" \
		"KbdInteractiveAuthentication no" "PermitRootLogin prohibit-password" "UsePAM no" "StrictModes no" \
		"PrintMotd no" "LogLevel ERROR" "SetEnv HOME=$box/home PATH=$remote_path SHLVL=1" >"$box/sshd_config"
	echo "[127.0.0.1]:$port $(cat "$box/host_key.pub")" >"$box/known_hosts"
	printf '%s\n' "Host build-box" "  HostName 127.0.0.1" "  Port $port" "  User $(id -un)" \
		"  IdentityFile $box/user_key" "  IdentitiesOnly yes" "  UserKnownHostsFile $box/known_hosts" \
		"  StrictHostKeyChecking yes" "  BatchMode yes" "  ConnectTimeout 10" "  LogLevel ERROR" >"$box/ssh_config"
	printf '#!/bin/sh\nexec %s -F %s "$@"\n' "$(command -v ssh)" "$box/ssh_config" >"$box/client/ssh"
	chmod +x "$box/client/ssh"
	"$sshd" -D -e -f "$box/sshd_config" 2>"$box/sshd.log" &
	sshd_pid=$!
	for _ in $(seq 100); do
		if "$box/client/ssh" build-box true 2>/dev/null || ! kill -0 "$sshd_pid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	"$box/client/ssh" build-box true 2>/dev/null && break
	kill "$sshd_pid" 2>/dev/null || true
	wait "$sshd_pid" 2>/dev/null || true
	sshd_pid=
	[ "$attempt" -lt 3 ] || { cat "$box/sshd.log" >&2; echo "first-use: could not start sshd for build-box" >&2; exit 1; }
done

# The blocks, extracted from the clone's own docs.
steps="$work/steps.sh"
: >"$steps"
for doc in README.md node/README.md docs/remote.md; do
	awk -v doc="$doc" '
		/^```sh norun first-use[ \t]*$/ { inblk = 1; blk = ""; next }
		inblk && /^```[ \t]*$/ { inblk = 0; print "\x1e" doc "\x1f" blk; next }
		inblk { blk = blk $0 "\n" }
	' "$clone/$doc"
done | awk 'BEGIN { RS = "\x1e" } NF { split($0, a, "\x1f"); if (!(a[2] in seen)) { seen[a[2]] = 1; printf "echo \"== first-use: %s\"\ncd %s\n%s\n", a[1], "\"$CLONE\"", a[2] } }' >"$steps"
n=$(grep -c '^echo "== first-use' "$steps" || true)
[ "$n" -ge 3 ] || { echo "first-use: found $n blocks fenced \`\`\`sh norun first-use, want at least 3" >&2; exit 1; }
(cd "$clone" && PATH="$box/client:$PATH" CLONE="$clone" bash -eu -o pipefail -c "source '$steps'; echo PATH=\$PATH" >"$work/out" 2>&1) || {
	cat "$work/out" >&2
	echo "first-use: a documented step failed (above)" >&2
	exit 1
}
path="$(sed -n 's/^PATH=//p' "$work/out" | tail -n 1)"

# What the steps promise.
fail() { echo "first-use: $*" >&2; cat "$work/out" >&2; exit 1; }
[ "$(PATH="$path" command -v ptyplex)" = "$clone/bin/ptyplex" ] || fail "ptyplex is not on the PATH the README sets"
got="$(cd "$work/myhost" && PATH="$path" go run .)"
[ "$got" = '"hi\r\n" 3' ] || fail "the Go host printed $got"
js="$(cd "$work/myproject" && env -u PTYPLEX_SIDECAR_PATH PATH=/usr/bin:/bin "$(command -v node)" -e '
const pty = require("ptyplex");
const t = pty.spawn("/bin/sh", ["-c", "echo npm-ok"]);
let out = "";
t.onData((d) => (out += d));
t.onExit(() => console.log(JSON.stringify({ out, build: pty.build, sidecar: pty.resolveSidecar() })));
')"
case "$js" in *'"out":"npm-ok\r\n"'*) ;; *) fail "the npm package printed $js" ;; esac
sidecar="$(node -e 'console.log(JSON.parse(process.argv[1]).sidecar)' "$js")"
build="$(node -e 'const b = JSON.parse(process.argv[1]).build; console.log(b.version + " (commit " + b.commit + ",")' "$js")"
v1="$("$clone/bin/ptyplex" --version)"
v2="$("$clone/bin/ptyplex-sidecar" --version)"
v3="$("$sidecar" --version)"
for v in "$v1" "$v2" "$v3"; do
	case "$v" in *" $build "*) ;; *) fail "versions differ: npm package $build; $v1 / $v2 / $v3 (npm's sidecar)" ;; esac
done
remote="$("$box/client/ssh" build-box 'command -v ptyplex; ptyplex --version')"
[ "$remote" = "$box/home/bin/ptyplex
$v1" ] || fail "ssh build-box ptyplex is not the ptyplex the steps installed and linked: $remote"
echo "first-use: $n documented steps passed on a fresh clone; ptyplex, ptyplex-sidecar and the npm package are $build ...), and ssh build-box ptyplex runs the one remote install put there"
