#!/bin/sh
# Turns a copy of the cached root file system into the vm engine's guest:
# Debian's own kernel (with its modules and initramfs: virtio, ext4 and 9p
# are modules in Debian's kernels) and the guest agent Debian ships, which
# udev starts when qemu's virtio-serial port appears, and e2fsprogs (no
# longer in a trixie debootstrap) for the file systems scenarios make on the
# guest's own disk (`diskStorages`). Runs INSIDE the copy
# (chroot), with the network: apt fetches from the mirror the rootfs was
# debootstrapped from. The image's cache key hashes this file.
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends linux-image-amd64 qemu-guest-agent e2fsprogs

# The serial console is a log for a person (console.log); nobody logs in on it.
systemctl mask serial-getty@ttyS0.service >/dev/null 2>&1 || true

# A small image: apt's lists and downloaded packages are not needed inside.
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
