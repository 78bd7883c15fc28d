#!/bin/sh
# matrix.sh KERNEL INITRAMFS - boot the kernel across the machine matrix and run the in-kernel
# self-tests (and, once user programs run, the tests/user programs) on each:
#   GIC v2 and v3  x  -cpu cortex-a72 and max,pauth-impdef=on  x  -smp 1 and 4, one boot per
# RAM size (256 MiB, 1, 2 and 4 GiB), and one boot entered at EL2
# Each boot has a timeout; a boot fails on any FAIL line, a missing summary, a panic or a hang.
# Prints PASS/FAIL per boot and per test line, and a closing "N passed, M failed".
set -u
kernel=$1 initramfs=$2
BUILD=${BUILD:-build}
pass=0 fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# QEMU's own command line first: a fresh machine has no ipxe-qemu (the NIC option ROMs)
out=$(sh tests/qemu/check-qemu-cmdline.sh "$kernel" "$initramfs")
printf '%s\n' "$out"
pass=$((pass + $(printf '%s\n' "$out" | grep -c '^PASS ')))
fail=$((fail + $(printf '%s\n' "$out" | grep -c '^FAIL ')))
# boot NAME CHECK: one self-test boot with the MACHINE/CPU/SMP/ICOUNT/MEM the caller exports;
# it passes when the guest exits 0 with PASS lines, no FAIL line, a summary line, and CHECK
# (a grep pattern, or empty) found exactly once in the console log.
boot() {
	name=$1 want=$2
	start=$(date +%s%N)
	TIMEOUT=30 APPEND=selftest sh tools/host/run.sh "$kernel" "$initramfs" '' > "$log" 2>&1
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	summary=$(grep -cE '^[0-9]+ passed, [0-9]+ failed' "$log")
	seen=1
	[ -z "$want" ] || seen=$(grep -c -- "$want" "$log")
	if [ $rc -eq 0 ] && [ "$f" -eq 0 ] && [ "$summary" -ge 1 ] && [ "$p" -gt 0 ] && [ "$seen" -eq 1 ]; then
		echo "PASS boot $name ($p tests, ${ms} ms)"
		pass=$((pass + p + 1))
	else
		echo "FAIL boot $name: exit $rc, $p passed, $f failed, summary lines $summary, '$want' seen $seen (${ms} ms)"
		grep -E '^(FAIL|SKIP) |panic|\*\*\*|run.sh:' "$log" | head -20
		tail -n 5 "$log"
		pass=$((pass + p)); fail=$((fail + f + 1))
	fi
}

for gic in 2 3; do
	for cpu in cortex-a72 max,pauth-impdef=on; do
		for smp in 1 4; do
			icount=0
			[ "$smp" = 1 ] && icount=1 # deterministic guest time on half the matrix
			MACHINE="virt,gic-version=$gic" CPU=$cpu SMP=$smp ICOUNT=$icount MEM= \
				boot "gicv$gic/${cpu%%,*}/smp$smp" ''
		done
	done
done
# RAM sizes on one machine: QEMU virt puts RAM at 1 GiB, so from 1 GiB up the linear map needs
# more than one level-1 entry and the page array lands above the first GiB; the self-test
# page_allocator_covers_ram checks that every page the DT lists is mapped and managed.
for mem in 256 1024 2048 4096; do
	MACHINE="virt,gic-version=3" CPU=max,pauth-impdef=on SMP=2 ICOUNT=0 MEM=$mem \
		boot "gicv3/max/smp2/mem$mem" "^  memory: $mem MiB of RAM,"
done
# Entry at EL2 (QEMU's virtualization=on): the kernel drops to EL1 itself.
MACHINE="virt,gic-version=3,virtualization=on" CPU=max,pauth-impdef=on SMP=4 ICOUNT=0 MEM= \
	boot "gicv3/max/smp4/el2" ''
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
