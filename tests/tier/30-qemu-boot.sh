#!/bin/sh
# Tier 3: QEMU boot tests across the machine matrix (in-kernel self-tests).
exec sh tests/qemu/matrix.sh "${BUILD:-build}/perfkernel.img" "${BUILD:-build}/initramfs.cpio"
