#!/bin/sh
# debian-overlay.sh ROOT PROG OUT - an overlay (make run OVERLAY=OUT) with one of Debian's own
# arm64 programs, unmodified: OUT/PROG (a path under ROOT, e.g. usr/bin/perf) and, in
# OUT/lib/aarch64-linux-gnu, every shared library in its NEEDED closure, from ROOT (where
# tools/host/deps.sh unpacked the program's and its libraries' packages) or, for libstdc++/
# libgcc_s/libm, the cross toolchain's Debian arm64 copies.  glibc itself (ld.so, libc.so.6) is
# in the base initramfs.  Fails when a library is missing.
set -eu
root=$1 prog=$2 out=$3
cross=/usr/aarch64-linux-gnu/lib
[ -x "$root/$prog" ] || { echo "debian-overlay: no $root/$prog (make deps)" >&2; exit 1; }
rm -rf "$out.tmp"
mkdir -p "$out.tmp/$(dirname "$prog")" "$out.tmp/lib/aarch64-linux-gnu"
cp "$root/$prog" "$out.tmp/$prog"
needed() { aarch64-linux-gnu-readelf -d "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; }
seen=" libc.so.6 ld-linux-aarch64.so.1 "
queue=$(needed "$root/$prog")
while [ -n "$queue" ]; do
	next=
	for l in $queue; do
		case "$seen" in *" $l "*) continue ;; esac
		seen="$seen$l "
		f=
		for d in "$root/usr/lib/aarch64-linux-gnu" "$root/lib/aarch64-linux-gnu" "$cross"; do
			[ -e "$d/$l" ] && { f="$d/$l"; break; }
		done
		[ -n "$f" ] || { echo "debian-overlay: $l not found" >&2; exit 1; }
		cp -L "$f" "$out.tmp/lib/aarch64-linux-gnu/$l"
		next="$next $(needed "$f")"
	done
	queue=$next
done
rm -rf "$out"
mv "$out.tmp" "$out"
