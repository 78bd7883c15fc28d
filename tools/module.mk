# Userland tools (static aarch64 glibc) that land in the initramfs /bin.
UPROGS +=
