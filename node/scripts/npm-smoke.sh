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
"$here/build-npm.sh" "$work/dist" "$plat"
mkdir "$work/project"
cd "$work/project"
echo '{"name":"ptyplex-smoke","private":true}' >package.json
# The two tarballs, whatever version build-npm.sh stamped.
npm install --offline --no-audit --no-fund --loglevel=error \
	"$work/dist"/ptyplex-sidecar-"$plat"-*.tgz "$(ls "$work/dist"/ptyplex-[0-9]*.tgz)"
# Both packages carry the license text.
cmp node_modules/ptyplex/LICENSE "$here/../../LICENSE"
cmp node_modules/@ptyplex/sidecar-"$plat"/LICENSE "$here/../../LICENSE"
cp "$here/smoke.js" .
# node by its full path: it need not live in /usr/bin or /bin.
env -u PTYPLEX_SIDECAR_PATH PATH=/usr/bin:/bin "$(command -v node)" smoke.js
