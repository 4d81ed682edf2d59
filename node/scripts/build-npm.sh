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
# VERSION and COMMIT: what the Go binaries' --version reports (the
# Makefile passes its own; run by hand, the same commands give the same).
VERSION="${VERSION:-$(cd "$root" && git describe --tags --always --dirty 2>/dev/null || echo dev)}"
COMMIT="${COMMIT:-$(cd "$root" && git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
base="$(node -p "require('$root/node/package.json').version")"
# The packages' version, stamped from VERSION: a release tag (v1.2.3, or
# git describe's v1.2.3-4-gabc) is the npm version without its v; any
# other build is a prerelease of the base version in node/package.json
# that names the build (0.1.0-dev.g1a2b3c4d5e6f, -dirty when it was).
if [[ "$VERSION" =~ ^v?([0-9]+\.[0-9]+\.[0-9]+.*)$ ]]; then
	version="${BASH_REMATCH[1]}"
else
	version="$base-dev.g${COMMIT}"
	[[ "$VERSION" != *-dirty ]] || version+="-dirty"
fi
ldflags="-s -w -X github.com/ptyplex/ptyplex/internal/version.Version=$VERSION -X github.com/ptyplex/ptyplex/internal/version.Commit=$COMMIT"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
echo "== version $VERSION, commit $COMMIT: npm packages $version"

# The tarballs of an earlier build of these packages (another commit, so
# another version) go: an install by glob, as node/README.md shows it,
# would otherwise get two versions of one package.
rm -f "$out"/ptyplex-[0-9]*.tgz
for plat in "${platforms[@]}"; do
	rm -f "$out"/ptyplex-sidecar-"$plat"-[0-9]*.tgz
done

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
	if ! (cd "$root" && CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -ldflags="$ldflags" \
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
	# The MIT license asks for its text to go with the software; npm packs
	# a LICENSE file whatever "files" says.
	cp "$root/LICENSE" "$dir/"
	(cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done
# The main package from a copy: its version, its dependencies on the
# platform packages and lib/build.json (what require('ptyplex').build
# reports) stamped, the source tree left as it is.
main="$stage/main"
mkdir -p "$main"
(cd "$root/node" && cp -R package.json README.md index.mjs index.d.ts lib "$main/")
cp "$root/LICENSE" "$main/"
node - "$main/package.json" "$version" <<'JS'
const fs = require('fs');
const [file, version] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
pkg.version = version;
for (const dep of Object.keys(pkg.optionalDependencies || {})) pkg.optionalDependencies[dep] = version;
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
JS
printf '{"version": "%s", "commit": "%s"}\n' "$VERSION" "$COMMIT" >"$main/lib/build.json"
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)
ls -l "$out"
if [ ${#failed[@]} -gt 0 ]; then
	echo "build-npm: no package for ${failed[*]}" >&2
	exit 1
fi
