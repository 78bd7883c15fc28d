# Userland test programs (static aarch64 glibc), run inside the kernel and on Linux (refvm.sh).
# Each program NAME: UPROGS += NAME and NAME_SRCS := tests/user/NAME.c [more]
UPROGS +=
