# Userland tools (static aarch64 glibc) that land in the initramfs /bin, and scripts copied as
# they are (USCRIPTS).
UPROGS += init
init_SRCS := tools/init/init.c
USCRIPTS += tools/demo.sh
