#!/usr/bin/env bash
# make npm-smoke: pack the main package and this platform's sidecar
# package, install both into a scratch project offline (from the tarballs,
# no registry), and run scripts/smoke.js there with no PTYPLEX_SIDECAR_PATH
# and no sidecar on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
plat="$(node -p 'process.platform + "-" + process.arch')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# dist/npm as an earlier build leaves it: an older version of both
# packages (not even tarballs: installed, they would fail) and another
# platform's package, which npm refuses to install here. The build
# replaces the first; the install by the README's globs leaves the other.
mkdir -p "$work/dist"
other=linux-arm64
[ "$plat" != "$other" ] || other=linux-x64
for f in ptyplex-0.0.1-dev.gstale.tgz ptyplex-sidecar-"$plat"-0.0.1-dev.gstale.tgz ptyplex-sidecar-"$other"-0.0.1-dev.gstale.tgz; do
	echo stale >"$work/dist/$f"
done
"$here/build-npm.sh" "$work/dist" "$plat"
mkdir "$work/project"
cd "$work/project"
echo '{"name":"ptyplex-smoke","private":true}' >package.json
# The two tarballs, whatever version build-npm.sh stamped, as node/README.md installs them.
npm install --offline --no-audit --no-fund --loglevel=error \
	"$work/dist"/ptyplex-sidecar-"$plat"-*.tgz "$work/dist"/ptyplex-[0-9]*.tgz
# Both packages carry the license text.
cmp node_modules/ptyplex/LICENSE "$here/../../LICENSE"
cmp node_modules/@ptyplex/sidecar-"$plat"/LICENSE "$here/../../LICENSE"
cp "$here/smoke.js" .
# node by its full path: it need not live in /usr/bin or /bin.
env -u PTYPLEX_SIDECAR_PATH PATH=/usr/bin:/bin "$(command -v node)" smoke.js
