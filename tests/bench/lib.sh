# lib.sh - what the guest benchmarks (bench-perf.sh, bench-sample.sh) share: the same static
# program run in perfkernel (make run's runner, ICOUNT=1 SMP=1) and in Debian's Linux 6.1
# (refvm.sh --icount --smp 1), each console kept for the caller to parse.  Sourced, not run.
#   bench_init NAME PROGRAM     check the inputs, make $w, copy PROGRAM into the overlay
#   bench_ours CMD              perfkernel: console in $w/ours.log; rc=1 when the run failed
#   bench_linux CMD             Linux: console in $w/linux.log; $linux is "ok" or why not
# The caller defines figures FILE (its result lines as "name value ...") before bench_linux.
# Env: BUILD (build), REFVM (default /work/shared/tools/refvm.sh or ../shared/tools/refvm.sh),
#      REFVM_LIMIT (s, 100).
BUILD="${BUILD:-build}"
rc=0

bench_init() {
	bench_name=$1
	IMG="$BUILD/perfkernel.img"
	INITRD="$BUILD/initramfs.cpio"
	for f in "$BUILD/user/bin/$2" "$IMG" "$INITRD"; do
		[ -f "$f" ] || { echo "$1: missing $f (make bench builds it; tests/bench/module.mk)"; exit 1; }
	done
	w=$(mktemp -d "/tmp/$1.XXXXXX") || exit 1
	trap 'rm -rf "$w"' EXIT INT TERM
	mkdir -p "$w/ov/bin"
	cp "$BUILD/user/bin/$2" "$w/ov/bin/$2"
}

bench_ours() {
	if ! ICOUNT=1 SMP=1 OVERLAY="$w/ov" TIMEOUT=60 BUILD="$BUILD" \
		sh tools/host/run.sh "$IMG" "$INITRD" "$1" > "$w/ours.log" 2>&1; then
		echo "$bench_name: perfkernel run failed (status $?); console tail:"
		tail -n 15 "$w/ours.log"
		rc=1
	fi
}

bench_linux() {
	REFVM="${REFVM:-}"
	if [ -z "$REFVM" ]; then
		for r in /work/shared/tools/refvm.sh ../shared/tools/refvm.sh; do
			[ -f "$r" ] && { REFVM=$r; break; }
		done
	fi
	: > "$w/linux"
	: > "$w/linux.log"
	linux="no refvm.sh"
	if [ -z "$REFVM" ] || [ ! -f "$REFVM" ]; then
		:
	elif ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
		linux="no qemu-system-aarch64"
	# refvm downloads the kernel once into its cache; bound the whole attempt (download,
	# boot, run) so that no network never means a hang
	elif timeout "${REFVM_LIMIT:-100}" sh "$REFVM" --icount --smp 1 --overlay "$w/ov" -- \
		"$1" > "$w/linux.log" 2>&1 < /dev/null; then
		figures "$w/linux.log" > "$w/linux"
		linux="no figures in its output"
		[ -s "$w/linux" ] && linux=ok
	else
		linux="refvm failed: $(tail -n 1 "$w/linux.log")"
	fi
}
