#!/bin/sh
# profile.sh - tools/profile inside perfkernel: per-CPU cpu-clock events with a PERF_EVENT eBPF
# program (bpf_get_stackid into a STACK_TRACE map, counts in a HASH map) attached through
# BPF_LINK_CREATE profile tools/workloads/hot.c; the folded output must name burn() first, under
# main and one of its callers, and show both callers.
set -u
BUILD=${BUILD:-build}
pass=0 fail=0
ok() { echo "PASS e2e-profile: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL e2e-profile: $1"; fail=$((fail + 1)); }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
SMP=2 TIMEOUT=180 sh tools/host/run.sh "$BUILD/perfkernel.img" "$BUILD/initramfs.cpio" \
	'profile -F 999 -- hot 40 > /tmp/folded && echo PROFILE-OK && cat /tmp/folded' > "$w/run.log" 2>&1
grep -q '^PROFILE-OK' "$w/run.log" && ok "profile -F 999 -- hot 40 runs" || { bad "profile failed"; tail -20 "$w/run.log"; }
sed -n '/^PROFILE-OK/,$p' "$w/run.log" | grep '^hot;' > "$w/folded"
top=$(head -n 1 "$w/folded")
echo "# top stack: $top"
case "$top" in *";main;caller_"[ab]";burn "[0-9]*) ok "the hottest stack ends in burn under main and a caller" ;; *) bad "top stack: $top" ;; esac
grep -q ';caller_a;burn ' "$w/folded" && grep -q ';caller_b;burn ' "$w/folded" && ok "both callers of burn appear" || bad "a caller of burn is missing"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
