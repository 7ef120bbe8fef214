#!/bin/sh
# For a suite whose guest boots an older release's kernel (bookworm-5.10:
# bookworm's userland on Debian 11's 5.10, a kernel without cgroup.kill).
# Runs INSIDE the guest image's copy (chroot) after vm-setup.sh, with the
# release as $1 and the mirror as $2: that release's sources are added for
# this one install and removed after, the userland's own kernel is purged,
# so /boot holds the old kernel and its initramfs only. The image's cache
# key hashes this file.
set -eu
from=$1
mirror=$2
export DEBIAN_FRONTEND=noninteractive
# gzip, which every kernel unpacks; the userland's initramfs-tools may default to a compressor an older kernel lacks.
echo COMPRESS=gzip > /etc/initramfs-tools/conf.d/outlive-compress
echo "deb $mirror $from main" > /etc/apt/sources.list.d/outlive-kernel-from.list
apt-get update -q
apt-get install -y -q --no-install-recommends --allow-downgrades "linux-image-amd64/$from"
keep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 | sed 's/[ ,(].*//')
purge=$(dpkg-query -W -f='${Package} ${Status}\n' 'linux-image-[0-9]*' | awk -v keep="$keep" '$1 != keep && $4 == "installed" { print $1 }')
[ -z "$purge" ] || apt-get purge -y -q $purge
rm -f /etc/apt/sources.list.d/outlive-kernel-from.list
echo "kernel from $from: $keep"
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
