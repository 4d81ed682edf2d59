#!/usr/bin/env bash
# first-use.sh: a new user's first steps, as the docs write them. On a
# fresh clone of this checkout's HEAD, runs every code block fenced
# ```sh norun first-use in README.md, node/README.md and docs/remote.md,
# in that order, in one bash (-eu -o pipefail), each from the clone's top
# directory (a block that repeats an earlier one word for word runs once).
# The blocks name the user's own module and project as the sibling
# directories ../myhost and ../myproject: this script makes those (a Go
# main that imports the client, an empty npm project), then checks what
# the steps promise: the Go host builds and runs a terminal, the installed
# npm package runs one with its bundled sidecar, and ptyplex,
# ptyplex-sidecar and the npm package name the same version and commit.
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
(cd "$clone" && CLONE="$clone" bash -eu -o pipefail -c "source '$steps'; echo PATH=\$PATH" >"$work/out" 2>&1) || {
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
echo "first-use: $n documented steps passed on a fresh clone; ptyplex, ptyplex-sidecar and the npm package are $build ...)"
