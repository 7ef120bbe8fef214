#!/bin/sh
# Turns a Debian base system (debootstrap's, or a docker/podman image) into
# the outlive test system. Runs INSIDE that system (chroot or RUN), offline:
# every step below must work without a network or a running systemd.
#   usage: rootfs-setup.sh USER UID
# The rootfs cache key hashes this file, so any edit here rebuilds the cache.
set -eu
user="${1:?user}"
uid="${2:?uid}"

# The unprivileged user the scenarios run as; a fixed uid so paths like
# /run/user/UID are known before boot.
if ! getent passwd "$user" >/dev/null; then
  groupadd --gid "$uid" "$user"
  useradd --uid "$uid" --gid "$uid" --create-home --shell /bin/sh "$user"
fi

# Lingering, offline: logind starts user@UID.service at boot for every name
# in this directory, which is what `loginctl enable-linger` would write.
mkdir -p /var/lib/systemd/linger
touch "/var/lib/systemd/linger/$user"

# Mount points for the project and the host's Node binary.
mkdir -p /work/project /usr/local/bin

# No getty on the console: with --console=pipe nobody logs in, and an
# agetty waiting on a pipe only fills the journal.
systemctl mask console-getty.service getty@tty1.service serial-getty@console.service >/dev/null 2>&1 || true

# A small image: apt's lists and downloaded packages are not needed inside.
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
