#!/bin/sh
# check-qemu-cmdline.sh KERNEL INITRAMFS - every QEMU the project starts is started by
# tools/host/run.sh, and run.sh gives it no device that needs firmware we do not install:
#   1. no other file in the tree runs qemu-system-* itself (it calls run.sh);
#   2. a boot through run.sh, with qemu-system-aarch64 wrapped to record its arguments, passes
#      -nic none (virt's default virtio NIC loads efi-virtio.rom from ipxe-qemu, which Debian
#      only recommends: without it QEMU refuses to start) and boots.
# Prints PASS/FAIL lines; the caller counts them.
set -u
kernel=$1 initramfs=$2
bad=0
others=$(grep -rlE 'qemu-system-[a-z0-9_]+' --include='*.sh' --include='*.mk' --include=Makefile \
	--include='*.py' . 2>/dev/null | grep -v '^\./build/' | grep -v '^\./tools/host/run\.sh$' |
	grep -v '^\./tests/qemu/check-qemu-cmdline\.sh$' | while read -r f; do
		# a line that runs QEMU (not one that names it in a message or a test)
		grep -nE '^[[:space:]{(]*((exec|timeout|env|nice)[^;|]*[[:space:]])?qemu-system-' "$f" |
			sed "s|^|$f:|"
	done)
if [ -z "$others" ]; then
	echo "PASS qemu cmdline: only tools/host/run.sh starts QEMU"
else
	echo "FAIL qemu cmdline: QEMU started outside tools/host/run.sh:"
	printf '%s\n' "$others" | head -5
	bad=1
fi

real=$(command -v qemu-system-aarch64)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cat > "$w/qemu-system-aarch64" <<EOS
#!/bin/sh
printf '%s\n' "\$@" > "$w/args"
exec "$real" "\$@"
EOS
chmod +x "$w/qemu-system-aarch64"
PATH="$w:$PATH" SMP=1 TIMEOUT=30 sh tools/host/run.sh "$kernel" "$initramfs" 'true' > "$w/log" 2>&1
rc=$?
if [ -s "$w/args" ] && grep -qx -- '-nic' "$w/args" &&
	[ "$(grep -x -A1 -- '-nic' "$w/args" | tail -n 1)" = none ]; then
	echo "PASS qemu cmdline: run.sh passes -nic none"
else
	echo "FAIL qemu cmdline: run.sh does not pass -nic none (args: $(tr '\n' ' ' < "$w/args" 2>/dev/null))"
	bad=1
fi
if [ $rc -eq 0 ]; then
	echo "PASS qemu cmdline: a boot through the wrapped QEMU exits 0"
else
	echo "FAIL qemu cmdline: a boot through the wrapped QEMU exits $rc"
	grep -i 'rom\|qemu' "$w/log" | head -3
	bad=1
fi
exit $bad
