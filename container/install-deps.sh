#!/bin/sh
# Installs what the harness's engines need on Debian/Ubuntu: systemd-nspawn,
# debootstrap and nsenter (nspawn), podman and runc (podman; runc because
# crun refuses hybrid-cgroup hosts), qemu and qemu-img (the vm engine; its
# guest image is made with mkfs.ext4 -d), what PTY tasks need (script, setpriv,
# stty), the shells `outlive completion` writes for (zsh, fish), and what the
# clients of `outlive serve` in examples/clients/ are run with (python3; for the
# Rust one Debian's serde_json, and cargo when the machine has none: rustup's
# in ~/.cargo/bin counts), what outlive-shim (shim/) is built with: rustc,
# cargo and Debian's libc crate (scripts/build-shim.ts builds it offline), and
# stress-ng (.ci/loaded runs some suites on a machine it keeps busy).
# Idempotent: installs nothing when all are there, and runs `apt-get update`
# only when something is missing. Needs root. `npm test`
# runs it as root (scripts/test-all.ts).
set -eu

missing=""
command -v systemd-nspawn >/dev/null 2>&1 || missing="$missing systemd-container"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
command -v nsenter >/dev/null 2>&1 || missing="$missing util-linux"
# PTY tasks: util-linux script holds the terminal, setpriv ties it to its holder, stty sizes it.
command -v script >/dev/null 2>&1 || missing="$missing bsdutils"
command -v setpriv >/dev/null 2>&1 || case "$missing" in *util-linux*) ;; *) missing="$missing util-linux" ;; esac
command -v stty >/dev/null 2>&1 && command -v mkfifo >/dev/null 2>&1 || missing="$missing coreutils"
# Ubuntu's debootstrap needs Debian's keyring to check a Debian suite.
[ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || missing="$missing debian-archive-keyring"
command -v podman >/dev/null 2>&1 || missing="$missing podman"
command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || missing="$missing runc"
# The vm engine: qemu (TCG, or KVM where a probe guest runs under it), qemu-img for each boot's overlay.
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing="$missing qemu-system-x86"
command -v qemu-img >/dev/null 2>&1 || missing="$missing qemu-utils"
command -v mkfs.ext4 >/dev/null 2>&1 || [ -x /usr/sbin/mkfs.ext4 ] || [ -x /sbin/mkfs.ext4 ] || missing="$missing e2fsprogs"
# The shells `outlive completion zsh|fish` writes for: its tests run each script in its own shell.
command -v zsh >/dev/null 2>&1 || missing="$missing zsh"
command -v fish >/dev/null 2>&1 || missing="$missing fish"
# The clients of outlive serve (test/clients, the scenario sidecar-rust): Python's standard library,
# and Rust built offline from Debian's crates (examples/clients/rust/.cargo/config.toml names their directory).
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
command -v cargo >/dev/null 2>&1 || [ -x "${HOME:-/root}/.cargo/bin/cargo" ] || missing="$missing cargo"
ls -d /usr/share/cargo/registry/serde_json-* >/dev/null 2>&1 || missing="$missing librust-serde-json-dev"
# .ci/loaded: stress-ng holds every core busy while the tests that once failed on a busy machine run.
command -v stress-ng >/dev/null 2>&1 || missing="$missing stress-ng"
# outlive-shim: a compiler (Debian's rustc 1.63 builds it, as rustup's does) and the libc crate, offline from shim/.cargo/config.toml.
command -v rustc >/dev/null 2>&1 || [ -x "${HOME:-/root}/.cargo/bin/rustc" ] || missing="$missing rustc"
ls -d /usr/share/cargo/registry/libc-* >/dev/null 2>&1 || missing="$missing librust-libc-dev"

if [ -z "$missing" ]; then
  echo "install-deps: systemd-nspawn, debootstrap (and Debian's keyring), nsenter, script, setpriv, stty, mkfifo, podman, runc, qemu-system-x86_64, qemu-img, mkfs.ext4, zsh, fish, python3, cargo, rustc, stress-ng and Debian's serde_json and libc crates are installed"
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
# qemu-system-x86 without what it recommends: qemu-system-gui (GTK and SDL: some 190 of the 590 packages a
# Debian 12 job container installs), ovmf and qemu-block-extra serve a display, UEFI and network disks, and the
# vm engine runs qemu with -display none, -kernel and a local overlay. In that job container
# (test/container/privileged-job.test.ts) install-deps took 118 s with them, 94 s without. The rest keeps its
# recommends.
rest=""
qemu=""
for p in $missing; do
  if [ "$p" = qemu-system-x86 ]; then qemu="$p"; else rest="$rest $p"; fi
done
# shellcheck disable=SC2086 # one word per package
[ -z "$rest" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q $rest
[ -z "$qemu" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$qemu"
