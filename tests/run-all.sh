#!/bin/sh
# run-all.sh - every test tier, in order: tests/tier/NN-name.sh.  Each tier prints PASS/FAIL/SKIP
# lines and ends with "N passed, M failed"; this sums them into one closing line and fails when
# any tier failed or ended without its summary.
export BUILD="${BUILD:-build}"
tp=0 tf=0 bad=""
for t in tests/tier/*.sh; do
	name=$(basename "$t" .sh)
	echo "=== tier $name ==="
	log=$(mktemp)
	{ sh "$t" 2>&1; echo "tier-exit=$?"; } | tee "$log"
	rc=$(sed -n 's/^tier-exit=//p' "$log")
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		bad="$bad $name(no summary)"; tf=$((tf + 1))
	else
		p=${line%% passed*}; f=${line#* passed, }; f=${f%% failed*}
		tp=$((tp + p)); tf=$((tf + f))
		if [ "$f" -ne 0 ]; then bad="$bad $name"
		elif [ "$rc" != 0 ]; then bad="$bad $name(exit $rc)"; tf=$((tf + 1)); fi
	fi
	rm -f "$log"
done
[ -z "$bad" ] || echo "failing tiers:$bad"
echo "total: $tp passed, $tf failed"
[ $tf -eq 0 ] && [ -z "$bad" ]
