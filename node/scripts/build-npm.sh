#!/usr/bin/env bash
# make npm: cross-build ptyplex-sidecar into one npm package per platform
# (@ptyplex/sidecar-<os>-<cpu>, with os/cpu fields so npm installs only the
# matching one), and npm pack them and the main package into $OUT.
#
# Usage: build-npm.sh OUTDIR [PLATFORM...]; platforms default to
# linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64
# (node's process.platform names: win32 is GOOS windows, and its binary
# is ptyplex-sidecar.exe).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
version="$(node -p "require('$root/node/package.json').version")"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

failed=()
for plat in "${platforms[@]}"; do
	os="${plat%-*}"
	cpu="${plat#*-}"
	case "$cpu" in
	x64) goarch=amd64 ;;
	arm64) goarch=arm64 ;;
	*) echo "build-npm: unknown cpu in $plat" >&2; exit 2 ;;
	esac
	goos="$os"
	exe=ptyplex-sidecar
	if [ "$os" = win32 ]; then
		goos=windows
		exe=ptyplex-sidecar.exe
	fi
	dir="$stage/$plat"
	mkdir -p "$dir/bin"
	echo "== $plat: GOOS=$goos GOARCH=$goarch"
	if ! (cd "$root" && CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -ldflags="-s -w" \
		-o "$dir/bin/$exe" ./cmd/ptyplex-sidecar); then
		echo "build-npm: ptyplex-sidecar does not build for $plat" >&2
		failed+=("$plat")
		continue
	fi
	cat >"$dir/package.json" <<JSON
{
  "name": "@ptyplex/sidecar-$plat",
  "version": "$version",
  "description": "The ptyplex-sidecar binary for $os on $cpu, installed by the ptyplex package",
  "license": "MIT",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/$exe"],
  "preferUnplugged": true
}
JSON
	printf '# @ptyplex/sidecar-%s\n\nThe `ptyplex-sidecar` binary for %s. Install `ptyplex` instead; it depends on this package.\n' "$plat" "$plat" >"$dir/README.md"
	(cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done
(cd "$root/node" && npm pack --silent --pack-destination "$out" >/dev/null)
ls -l "$out"
if [ ${#failed[@]} -gt 0 ]; then
	echo "build-npm: no package for ${failed[*]}" >&2
	exit 1
fi
