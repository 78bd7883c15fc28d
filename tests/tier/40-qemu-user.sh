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
# The eBPF programs once more with the JIT off (bpf_jit_enable 0: new loads interpreted), on
# the first machine; t_bpf_jit is not among them: it checks the sysctl's default of 1 and sets
# it both ways itself.
echo "--- machine virt,gic-version=3, cpu max, bpf_jit_enable 0"
bpf_progs='$(ls /bin/t_bpf_* /bin/t_perf_bpf /bin/t_libbpf* /bin/t_kbtf /bin/t_tracepoint /bin/t_kprobe /bin/t_uprobe /bin/t_tp_* /bin/t_probe_* 2>/dev/null | grep -v /t_bpf_jit$)'
out=$(MACHINE=virt,gic-version=3 CPU=max,pauth-impdef=on USER_PRE='echo 0 > /proc/sys/net/core/bpf_jit_enable' \
	USER_PROGS="$bpf_progs" sh tests/qemu/user.sh "$B/perfkernel.img" "$B/initramfs.cpio" 2>&1)
printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$' | sed 's/^/jit off: /'
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
p=${line%% passed*}; f=${line#* passed, }; f=${f%% failed*}
[ -n "$line" ] || { p=0; f=1; echo "FAIL user tier: no summary for the JIT-off run"; }
echo "jit off: $p passed, $f failed"
tp=$((tp + p)); tf=$((tf + f))
echo "$tp passed, $tf failed"
[ $tf -eq 0 ]
