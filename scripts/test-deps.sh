#!/usr/bin/env bash
# make test's set-up on a fresh machine: the programs the end-to-end tests
# drive (vim, less, tmux as a reference terminal, ps and top from procps,
# zsh for --shell-integration, and sshd: the remote-terminal tests start
# their own on 127.0.0.1; htop, mc, nano, man, dialog and whiptail for the
# persistent SNAPSHOT's differential), installed with apt-get when one is missing
# (with sudo when not root). Go, gcc, git, python3 and Node with npm are
# assumed (README: the two commands).
set -euo pipefail

need=()
for p in vim less tmux ps top zsh htop mc nano man dialog whiptail; do
	command -v "$p" >/dev/null 2>&1 || need+=("$p")
done
[ -x /usr/sbin/sshd ] || need+=(sshd)
[ ${#need[@]} -eq 0 ] && exit 0

echo "test-deps: missing ${need[*]}; installing vim less tmux procps zsh openssh-server htop mc nano man-db dialog whiptail with apt-get"
if ! command -v apt-get >/dev/null 2>&1; then
	echo "test-deps: no apt-get here: install ${need[*]} by hand (the tests fail, not skip, without them)" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "test-deps: not root and no sudo: install ${need[*]} by hand" >&2; exit 1; }
	sudo="sudo"
fi
$sudo apt-get update -qq
# openssh-server would start sshd on port 22 where an init system runs;
# the tests need only the binary.
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
	vim less tmux procps zsh openssh-server htop mc nano man-db dialog whiptail >/dev/null
