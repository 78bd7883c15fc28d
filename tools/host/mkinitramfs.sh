#!/bin/sh
# mkinitramfs.sh OUT BUILD [PROGRAM...] - the base initramfs (cpio newc): /init and the
# userland programs in /bin, Debian's busybox-static with its applet links, Debian's ld.so and
# libc.so.6 for dynamically linked programs, /out, /tmp, /dev.
# Per-run content (the command, an overlay) is appended by run.sh as a second archive.
set -eu
out=$1 build=$2
shift 2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/dev" "$root/tmp" "$root/out" \
	"$root/proc" "$root/sys" "$root/etc" "$root/root"
bb="$build/deps/arm64/bin/busybox"
if [ -x "$bb" ]; then
	cp "$bb" "$root/bin/busybox"
	for a in sh ls cat echo wc sleep mkdir rm cp mv ln true false test grep sed head tail \
		sort uniq tr cut env printf seq yes kill ps mount uname date dd od xxd find \
		basename dirname expr stat touch chmod sync tee which awk; do
		ln -s busybox "$root/bin/$a"
	done
fi
# Debian's arm64 glibc as shared objects, where its ld.so looks (the cross toolchain's copy)
glibc=${GLIBC_DIR:-/usr/aarch64-linux-gnu/lib}
if [ -e "$glibc/ld-linux-aarch64.so.1" ]; then
	mkdir -p "$root/lib/aarch64-linux-gnu"
	cp "$glibc/ld-linux-aarch64.so.1" "$root/lib/"
	cp "$glibc/libc.so.6" "$root/lib/aarch64-linux-gnu/"
fi
for p in "$@"; do
	cp "$p" "$root/bin/$(basename "$p")"
done
[ -e "$root/bin/init" ] && ln -s bin/init "$root/init"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
