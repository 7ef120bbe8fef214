#!/bin/sh
# Installs what the engine-less container needs (systemd-nspawn, debootstrap,
# nsenter) and what PTY tasks need (script, setpriv, stty) on Debian/Ubuntu. Idempotent: installs nothing when all are there,
# and runs `apt-get update` only when something is missing. Needs root.
set -eu

missing=""
command -v systemd-nspawn >/dev/null 2>&1 || missing="$missing systemd-container"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
command -v nsenter >/dev/null 2>&1 || missing="$missing util-linux"
# PTY tasks: util-linux script holds the terminal, setpriv ties it to its holder, stty sizes it.
command -v script >/dev/null 2>&1 || missing="$missing bsdutils"
command -v setpriv >/dev/null 2>&1 || case "$missing" in *util-linux*) ;; *) missing="$missing util-linux" ;; esac
command -v stty >/dev/null 2>&1 && command -v mkfifo >/dev/null 2>&1 || missing="$missing coreutils"

if [ -z "$missing" ]; then
  echo "install-deps: systemd-nspawn, debootstrap, nsenter, script, setpriv, stty and mkfifo are installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: needs root to install:$missing" >&2
  exit 77
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt-get; install by hand:$missing" >&2
  exit 77
fi
echo "install-deps: installing$missing"
apt-get update -q
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
