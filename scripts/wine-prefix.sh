#!/bin/sh
# wine-prefix.sh: prepares (once) and prints the Wine prefix that
# `make test-windows` runs the Windows build in.
#
# The prefix is cached under $PTYPLEX_WINE_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/ptyplex-wine) and made once: wineboot
# takes most of a minute, every later run reuses it.
#
# Go 1.22 and later binaries need bcryptprimitives.dll's ProcessPrng at
# start, which Wine 8 lacks; a forwarder DLL of a few KB that sends it
# to advapi32's SystemFunction036 (RtlGenRandom, the same contract) is
# linked here with mingw's binutils and put in the prefix's system32.
# The prefix claims Windows 10: node.exe refuses to start on Wine's
# default (Windows 7), and ConPTY is a Windows 10 API.
set -eu
cache=${PTYPLEX_WINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptyplex-wine}
prefix=$cache/prefix
ready=$prefix/.ptyplex-ready-2
if [ -f "$ready" ]; then
	echo "$prefix"
	exit 0
fi
for tool in wine wineboot wineserver x86_64-w64-mingw32-as x86_64-w64-mingw32-ld; do
	command -v $tool >/dev/null || {
		echo "wine-prefix.sh: $tool not found (apt-get install wine wine64 binutils-mingw-w64-x86-64)" >&2
		exit 1
	}
done
mkdir -p "$cache"
WINEPREFIX=$prefix wineserver -k 2>/dev/null || true
rm -rf "$prefix"
WINEPREFIX=$prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" wineboot -i >"$cache/wineboot.log" 2>&1
WINEPREFIX=$prefix WINEDEBUG=-all winecfg /v win10 >>"$cache/wineboot.log" 2>&1
WINEPREFIX=$prefix wineserver -w
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/main.s" <<'ASM'
	.text
	.globl DllMain
DllMain:
	movl $1, %eax
	ret
ASM
cat >"$work/bcryptprimitives.def" <<'DEF'
LIBRARY bcryptprimitives.dll
EXPORTS
ProcessPrng = advapi32.SystemFunction036
DEF
x86_64-w64-mingw32-as -o "$work/main.o" "$work/main.s"
x86_64-w64-mingw32-ld -shared --entry DllMain -o "$work/bcryptprimitives.dll" "$work/main.o" "$work/bcryptprimitives.def"
cp "$work/bcryptprimitives.dll" "$prefix/drive_c/windows/system32/bcryptprimitives.dll"
touch "$ready"
echo "$prefix"
