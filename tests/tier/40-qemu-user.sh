#!/bin/sh
# Tier 3b: the Linux-checked tests/user programs inside perfkernel (-smp 4).
exec sh tests/qemu/user.sh "${BUILD:-build}/perfkernel.img" "${BUILD:-build}/initramfs.cpio"
