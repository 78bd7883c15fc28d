#!/bin/sh
# Tier 3b: the Linux-checked tests/user programs inside perfkernel at -smp 4, on two machines:
# -cpu max with GICv3 (PMUv3p5, FEAT_IDST) and cortex-a72 with GICv2 (ARMv8.0 PMUv3).
B=${BUILD:-build}
tp=0 tf=0
for cfg in "virt,gic-version=3 max,pauth-impdef=on" "virt cortex-a72"; do
	set -- $cfg
	echo "--- machine $1, cpu $2"
	out=$(MACHINE=$1 CPU=$2 sh tests/qemu/user.sh "$B/perfkernel.img" "$B/initramfs.cpio" 2>&1)
	printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	p=${line%% passed*}; f=${line#* passed, }; f=${f%% failed*}
	[ -n "$line" ] || { p=0; f=1; echo "FAIL user tier: no summary for $cfg"; }
	tp=$((tp + p)); tf=$((tf + f))
done
echo "$tp passed, $tf failed"
[ $tf -eq 0 ]
