#!/bin/sh
# run.sh - run host cmocka test programs; one line per program, then "N passed, M failed"
# counted over test cases (cmocka's own summaries).
pass=0 fail=0
for t in "$@"; do
	out=$(CMOCKA_MESSAGE_OUTPUT=stdout "$t" 2>&1); rc=$?
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	pass=$((pass + p)); fail=$((fail + f))
	if [ $rc -eq 0 ]; then
		echo "PASS $(basename "$t") ($p cases)"
	else
		echo "FAIL $(basename "$t") (exit $rc)"
		printf '%s\n' "$out" | grep -E 'FAILED|ERROR|error|Assert|Sanitizer|runtime error' | head -20
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
