#!/bin/sh
# debian-perf.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64 perf,
# unmodified: OUT/usr/bin/perf and, in OUT/lib/aarch64-linux-gnu, every shared library in its
# NEEDED closure, from BUILD/deps/perf-root (tools/host/deps.sh downloads linux-perf and the
# library packages) or, for libstdc++/libgcc_s/libm, the cross toolchain's Debian arm64 copies,
# and OUT/usr/lib/perf-core (perf's scripts and shell tests).
# glibc itself (ld.so, libc.so.6) is in the base initramfs.  Fails when a library is missing.
set -eu
B=$1 out=$2
root="$B/deps/perf-root"
cross=/usr/aarch64-linux-gnu/lib
[ -x "$root/usr/bin/perf" ] || { echo "debian-perf: no $root/usr/bin/perf (make deps)" >&2; exit 1; }
rm -rf "$out.tmp"
mkdir -p "$out.tmp/usr/bin" "$out.tmp/lib/aarch64-linux-gnu"
cp "$root/usr/bin/perf" "$out.tmp/usr/bin/perf"
# perf's own scripts, among them the shell tests `perf test` lists after its C tests
mkdir -p "$out.tmp/usr/lib"
cp -a "$root/usr/lib/perf-core" "$out.tmp/usr/lib/perf-core"
needed() { aarch64-linux-gnu-readelf -d "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; }
seen=" libc.so.6 ld-linux-aarch64.so.1 "
queue=$(needed "$root/usr/bin/perf")
while [ -n "$queue" ]; do
	next=
	for l in $queue; do
		case "$seen" in *" $l "*) continue ;; esac
		seen="$seen$l "
		f=
		for d in "$root/usr/lib/aarch64-linux-gnu" "$root/lib/aarch64-linux-gnu" "$cross"; do
			[ -e "$d/$l" ] && { f="$d/$l"; break; }
		done
		[ -n "$f" ] || { echo "debian-perf: $l not found" >&2; exit 1; }
		cp -L "$f" "$out.tmp/lib/aarch64-linux-gnu/$l"
		next="$next $(needed "$f")"
	done
	queue=$next
done
rm -rf "$out"
mv "$out.tmp" "$out"
