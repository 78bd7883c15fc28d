#!/bin/sh
# verifier-diff.sh - the eBPF verifier against Linux's: tests/fuzz/vdiff loads the same 4,000
# random programs (seeds 1-4) inside perfkernel that tools/bpf/vdiff-record.sh loaded on
# Debian's Linux 6.1, whose answers are in tests/e2e/vdiff-linux.txt.  Each program must get
# Linux's errno (0 when it loads).  The verifier's reason is compared too and the differing
# ones are counted, not failed (wording is not the ABI).  Programs listed in
# tests/e2e/vdiff-xfail.txt differ for the reason given there: they are reported, not failed,
# and reported as XPASS once they agree.
set -u
BUILD=${BUILD:-build}
want=tests/e2e/vdiff-linux.txt
xfail=tests/e2e/vdiff-xfail.txt
pass=0 fail=0
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
SMP=2 TIMEOUT=300 sh tools/host/run.sh "$BUILD/perfkernel.img" "$BUILD/initramfs.cpio" \
	'for s in 1 2 3 4; do vdiff $s 1000; done; echo VDIFF-DONE' > "$w/log" 2>&1
early=0
grep -q '^VDIFF-DONE' "$w/log" || { early=1; echo "FAIL verifier-diff: the guest run ended early"; tail -20 "$w/log"; }
grep '^[0-9]\+\.[0-9]\+ ' "$w/log" > "$w/got"
sed -n 's/^\([0-9]\+\.[0-9]\+\) .*/\1/p' "$xfail" > "$w/xf" 2> /dev/null
awk -v xf="$w/xf" -v xfile="$xfail" '
	function reason(   r) { r = $0; sub(/^[^ ]+ [0-9]+ ?/, "", r); return r }
	BEGIN { while ((getline l < xf) > 0) x[l] = 1 }
	FNR == NR { if ($1 ~ /^[0-9]+\.[0-9]+$/) { e[$1] = $2; m[$1] = reason(); n[substr($1, 1, index($1, ".") - 1)]++ } next }
	{ got[$1] = $2; gm[$1] = reason() }
	END {
		for (id in e) {
			s = substr(id, 1, index(id, ".") - 1)
			if (!(id in got)) { miss[s]++; continue }
			if (got[id] == e[id]) {
				if (id in x) printf "XPASS verifier-diff: program %s now gets Linux'"'"'s errno %d (%s)\n", id, e[id], xfile
				else { ok[s]++; if (gm[id] != m[id]) wording[s]++ }
			} else if (id in x) {
				xf_n++
			} else {
				bad[s]++
				if (shown++ < 12)
					printf "#   program %s: Linux %d \"%s\", here %d \"%s\"\n", id, e[id], m[id], got[id], gm[id]
			}
		}
		for (s = 1; s <= 4; s++) {
			if (bad[s] || miss[s])
				printf "FAIL verifier-diff seed %d: %d of %d programs get a different errno than Linux, %d did not run\n", s, bad[s] + 0, n[s], miss[s] + 0
			else
				printf "PASS verifier-diff seed %d: %d of %d programs get Linux'"'"'s errno (%d reasons worded differently)\n", s, ok[s] + 0, n[s], wording[s] + 0
		}
		if (xf_n) printf "XFAIL verifier-diff: %d programs differ for the reasons in %s\n", xf_n, xfile
	}' "$want" "$w/got" > "$w/res"
grep -v '^[A-Z]*PASS\|^FAIL\|^XFAIL' "$w/res"
grep '^PASS\|^FAIL\|^XFAIL\|^XPASS' "$w/res"
pass=$(grep -c '^PASS' "$w/res")
fail=$(grep -c '^FAIL' "$w/res")
fail=$((fail + early))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
