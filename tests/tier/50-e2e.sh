#!/bin/sh
# Tier 4: end to end: perf record inside the guest, the host's real perf report/script read it;
# the eBPF profile tool inside the guest; Debian's own perf, strace -f and bpftool inside the guest.
p=0 f=0 rc=0
for s in tests/e2e/record-report.sh tests/e2e/profile.sh tests/e2e/debian-perf.sh \
	tests/e2e/debian-strace.sh tests/e2e/verifier-diff.sh tests/e2e/debian-bpftool.sh; do
	out=$(sh "$s" 2>&1) || rc=1
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	[ -n "$line" ] || { f=$((f + 1)); rc=1; continue; }
	p=$((p + ${line%% passed*}))
	x=${line#* passed, }; f=$((f + ${x%% failed*}))
done
echo "$p passed, $f failed"
exit $rc
