#!/bin/sh
# run.sh KERNEL INITRAMFS CMD - the one way to boot perfkernel (make run, tests, benchmarks).
#
# Environment (all optional): SMP (4), ICOUNT (1: -icount shift=0), OVERLAY (host dir copied
# into the initramfs root), OUTDIR (the guest's /out lands here), MACHINE (virt,gic-version=3),
# CPU (max,pauth-impdef=on), MEM (512 MiB), TIMEOUT (seconds, 300), APPEND (extra boot args),
# BUILD (build), QEMU_EXTRA (more qemu arguments, e.g. a -monitor socket for debugging a hang).
# CMD runs inside through busybox sh -c; an empty CMD runs the demo.
# Exits with the guest's exit status; 124 on timeout, 125 on a kernel panic, 126 when the
# guest ended without an exit line.
set -u
kernel=$1 initramfs=$2 cmd=${3:-}
SMP=${SMP:-4} MACHINE=${MACHINE:-virt,gic-version=3} CPU=${CPU:-max,pauth-impdef=on}
MEM=${MEM:-512} TIMEOUT=${TIMEOUT:-300} BUILD=${BUILD:-build}
[ -n "$SMP" ] || SMP=4
[ -n "$MACHINE" ] || MACHINE=virt,gic-version=3
[ -n "$CPU" ] || CPU=max,pauth-impdef=on
w=$(mktemp -d /tmp/perfkernel-run.XXXXXX)
trap 'rm -rf "$w"' EXIT INT TERM

# Per-run archive: the command and the overlay, appended to the base initramfs.
mkdir -p "$w/x"
[ -z "${OVERLAY:-}" ] || cp -a "$OVERLAY/." "$w/x/"
printf '%s\n' "$cmd" > "$w/x/cmd"
(cd "$w/x" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$w/extra.cpio"
cat "$initramfs" "$w/extra.cpio" > "$w/initrd"

# The demo records into /out: give it an OUTDIR so the host can report what it recorded.
demo_out=
if [ -z "$cmd" ] && [ -z "${OUTDIR:-}" ]; then
	demo_out="$w/demo-out"
	OUTDIR=$demo_out
fi
args="semihost ${APPEND:-}"
if [ -n "${OUTDIR:-}" ]; then
	mkdir -p "$OUTDIR"
	args="$args out=$w/out.cpio"
fi
icount=
[ "${ICOUNT:-}" = 1 ] && icount="-icount shift=0"

# The console goes to the terminal live and to a log the exit status is read from.
# -nic none: the guest has no network, and virt's default NIC would load an option ROM
# (efi-virtio.rom) from ipxe-qemu, which Debian only recommends.
{ timeout --foreground "$TIMEOUT" qemu-system-aarch64 -nographic -no-reboot -nic none \
	-machine "$MACHINE" -cpu "$CPU" -smp "$SMP" -m "$MEM" $icount \
	-semihosting-config enable=on,target=native \
	-kernel "$kernel" -initrd "$w/initrd" -append "$args" ${QEMU_EXTRA:-} < /dev/null 2>&1
  echo $? > "$w/qemu.rc"; } | tr -d '\r' | tee "$w/console.log"
qrc=$(cat "$w/qemu.rc")
log=$(cat "$w/console.log")
if [ -n "${OUTDIR:-}" ] && [ -s "$w/out.cpio" ]; then
	(cd "$OUTDIR" && cpio -idmu --quiet --no-absolute-filenames < "$w/out.cpio")
fi
# The demo's round trip: the host's real perf report reads what perf record wrote inside.
if [ -z "$cmd" ] && [ -s "$OUTDIR/perf.data" ] && command -v perf > /dev/null; then
	symfs="$w/symfs"
	mkdir -p "$symfs" && ln -s "$(cd "$BUILD/user/bin" && pwd)" "$symfs/bin"
	echo "=== on the host: perf report --stdio of the guest's perf.data (top entries) ==="
	ksopt= # the guest kernel's own symbols (tools/host/kallsyms.sh), for its [k] entries
	[ -s "$BUILD/perfkernel.kallsyms" ] && ksopt="--kallsyms=$BUILD/perfkernel.kallsyms"
	perf report -i "$OUTDIR/perf.data" --stdio --symfs="$symfs" --no-children $ksopt \
		--percent-limit 2 2> /dev/null | grep -v '^#' | grep -v '^$' | head -n 40
fi
status=$(printf '%s\n' "$log" | sed -n 's/^perfkernel: exit status \(-\{0,1\}[0-9]*\)$/\1/p' | tail -n 1)
if printf '%s\n' "$log" | grep -q '^perfkernel: panic$'; then
	exit 125
fi
[ $qrc -eq 124 ] && { echo "run.sh: timeout after ${TIMEOUT}s" >&2; exit 124; }
[ -n "$status" ] || { echo "run.sh: guest ended without an exit status (qemu $qrc)" >&2; exit 126; }
exit "$status"
