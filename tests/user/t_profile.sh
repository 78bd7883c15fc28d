#!/bin/sh
# t_profile.sh: tools/profile (per-CPU cpu-clock, a PERF_EVENT eBPF program with get_stackid,
# STACK_TRACE + HASH maps, BPF_LINK_CREATE) on tools/workloads/hot: the folded output names
# burn() first, under main and one of its callers, and shows both callers.
# Needs /bin/profile and /bin/hot (make test-linux copies them).
# Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29.
P=t_profile.sh
fails=0 npass=0
pass() { echo "PASS $P: $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $P: $1: $2"; fails=$((fails + 1)); }

out=/tmp/t_profile.$$
if PATH=/bin:$PATH profile -F 999 -- hot 40 > "$out" 2> "$out.err"; then
	pass "profile -F 999 -- hot 40 exits 0"
else
	fail "profile -F 999 -- hot 40 exits 0" "rc $? $(cat "$out.err")"
fi
top=$(grep '^hot;' "$out" | head -n 1)
echo "# top: $top"
case "$top" in
*";main;caller_"[ab]";burn "[0-9]*) pass "the hottest stack ends in burn under main and a caller" ;;
*) fail "the hottest stack ends in burn under main and a caller" "'$top'" ;;
esac
if grep -q ';caller_a;burn ' "$out" && grep -q ';caller_b;burn ' "$out"; then
	pass "both callers of burn appear"
else
	# one line, so the test log keeps it: the summary and the five hottest stacks
	fail "both callers of burn appear" "$(cat "$out.err") | $(grep '^hot;' "$out" | head -n 5 | tr '\n' '|')"
fi
rm -f "$out" "$out.err"
echo "# $P: $npass pass, $fails fail, 0 skip"
[ "$fails" -eq 0 ]
