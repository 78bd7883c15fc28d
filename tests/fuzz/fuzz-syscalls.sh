#!/bin/sh
# fuzz-syscalls.sh - random system calls against the kernel from inside it, on both machines
# of tier 40: sysfuzz (any syscall number, edge-value arguments) and perffuzz
# (perf_event_open, bpf(2), perf ioctls, mmap and read with random half-valid arguments) and
# filefuzz (writes of generated text, reads and seeks on tracefs, /sys, /proc/sys, /proc/self and
# a bpf filesystem: probe definitions, filters, sysctl values; events opened by their tracefs id).
# The kernel must neither panic nor hang, and no fuzzing child may hang; children killed by
# signals are expected.  make fuzz (FUZZ_LONG=1): 20 seeds of 8 children x 5000 calls each
# per fuzzer and machine; otherwise 2 seeds of 4 x 2000.  FUZZ_SEEDS ("1 2") overrides.
BUILD="${BUILD:-build}"
if [ -n "$FUZZ_LONG" ]; then seeds=$(seq 1 20) n=8 calls=5000 t=3000; else seeds="1 2" n=4 calls=2000 t=600; fi
seeds="${FUZZ_SEEDS:-$seeds}"
rc=0
for cfg in "virt,gic-version=3 max,pauth-impdef=on" "virt cortex-a72"; do
	set -- $cfg
	log=$(mktemp)
	cmd="cd /tmp; for s in $(echo $seeds); do sysfuzz $n $calls \$s; perffuzz $n $calls \$s || echo PERFFUZZ-HUNG; filefuzz $n $calls \$s; done; echo FUZZ-DONE"
	MACHINE=$1 CPU=$2 SMP=4 TIMEOUT=$t sh tools/host/run.sh "$BUILD/perfkernel.img" \
		"$BUILD/initramfs.cpio" "$cmd" > "$log" 2>&1
	st=$?
	if [ $st -eq 0 ] && grep -q '^FUZZ-DONE' "$log" && [ "$(grep -c '^filefuzz:' "$log")" -eq "$(echo $seeds | wc -w)" ] && ! grep -q -e 'PERFFUZZ-HUNG' -e '^kernel panic' "$log"; then
		echo "PASS fuzz-syscalls $2: seeds $(echo $seeds): $(grep -c '^sysfuzz:' "$log") sysfuzz and $(grep -c '^perffuzz:' "$log") perffuzz and $(grep -c '^filefuzz:' "$log") filefuzz runs, no panic, no hang"
	else
		echo "FAIL fuzz-syscalls $2 (exit $st)"
		grep -a -e 'hung at' -e '^\*\*\*' -e '^kernel panic' -e 'perfkernel:' "$log" | grep -v 'unknown syscall' | head -20
		grep -a -A30 '^\*\*\*' "$log" | head -40
		rc=1
	fi
	rm -f "$log"
done
exit $rc
