#!/bin/sh
# refvm-stat.sh - functional checks of our `perf stat` on real Linux 6.1
# (refvm: Debian arm64 Linux under QEMU with --icount, 2 CPUs). Each check
# prints PASS/FAIL; the last line is a summary. The output layout itself is
# compared with real perf by compare-stat.sh. Host-side only.
#
#   tools/perf/tests/refvm-stat.sh [path/to/our/perf]   (default build/user/bin/perf)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OURS=${1:-build/user/bin/perf}
REFVM=${REFVM:-/work/shared/tools/refvm.sh}
CC=${CROSS:-aarch64-linux-gnu-}gcc
W=$(mktemp -d /tmp/refvm-stat.XXXXXX); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/ov"
cp "$OURS" "$W/ov/perfk"
$CC -static -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -o "$W/ov/hot" "$HERE/../../workloads/hot.c"

cat > "$W/ov/checks.sh" <<'CHECKS'
P=/perfk
ok() { echo "PASS: $*"; }
bad() { echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
field() { awk -F, -v n="$2" -v f="$3" '$3 == n { print $f; exit }' "$1"; }

# 1. user-mode instructions are deterministic under icount: ours ~ real perf
#    (within 0.1%: real perf exports PERF_* variables, so the workload's libc
#    start-up walks a slightly larger environment)
perf stat -x, -e instructions:u -- /hot 1 2>/tmp/ref >/dev/null
$P stat -x, -e instructions:u -- /hot 1 2>/tmp/our >/dev/null
r=$(field /tmp/ref instructions:u 1); o=$(field /tmp/our instructions:u 1)
check "instructions:u matches real perf ($o vs $r)" \
  'awk -v o="$o" -v r="$r" "BEGIN { d = o - r; if (d < 0) d = -d; exit !(r > 1000000 && d < r / 1000) }"'

# 2. default events: the software ones and cycles/instructions count
$P stat -x, -- /hot 1 2>/tmp/our >/dev/null
for e in task-clock context-switches cpu-migrations page-faults cycles instructions; do
  v=$(field /tmp/our $e 1)
  check "default event $e counted ($v)" 'case "$v" in ""|"<not"*) false ;; *) true ;; esac'
done
v=$(field /tmp/our page-faults 1); check "page-faults > 10 ($v)" '[ "$v" -gt 10 ]'

# 3. exit status and exec failure, as perf 6.1
$P stat -e cycles -- /bin/busybox false 2>/dev/null; rc=$?
check "exit status of the workload is returned ($rc)" '[ $rc = 1 ]'
$P stat -e cycles -- /nonexistent 2>/tmp/our; rc=$?
check "exec failure: rc 255 and 'Workload failed' ($rc)" '[ $rc = 255 ] && grep -q "^Workload failed: No such file or directory" /tmp/our'

# 4. multiplexing: 9 cycles events on 7 counters are scaled back to agree
$P stat -x, -e cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles -- /hot 20 2>/tmp/our >/dev/null
check "multiplexed: some running < 100%" 'awk -F, "\$5 < 100" /tmp/our | grep -q cycles'
check "multiplexed: scaled counts within 3% of each other" \
  'awk -F, "{ if (!min || \$1 < min) min = \$1; if (\$1 > max) max = \$1 } END { exit !(min > 0 && max < min * 1.03) }" /tmp/our'
$P stat -e cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles -- /hot 20 2>/tmp/our >/dev/null
check "multiplexed: (xx.xx%) shown" 'grep -qE "cycles +\(([0-9]+\.[0-9][0-9])%\)$" /tmp/our'

# 5. -r: run count, +- noise
$P stat -r 3 -e task-clock -- /hot 1 2>/tmp/our >/dev/null
check "-r 3 header and noise" 'grep -q "(3 runs):" /tmp/our && grep -q "( +- " /tmp/our && grep -q "seconds time elapsed  ( +-" /tmp/our'

# 6. -a: task-clock on 2 CPUs over a 0.3 s sleep ~ 2 CPUs utilized
$P stat -a -x, -e task-clock -- /bin/busybox sleep 0.3 2>/tmp/our
v=$(field /tmp/our task-clock 6)
check "-a: CPUs utilized ~2 ($v)" 'awk -v v="$v" "BEGIN { exit !(v > 1.8 && v < 2.2) }"'
$P stat -C 1 -x, -e task-clock -- /bin/busybox sleep 0.3 2>/tmp/our
v=$(field /tmp/our task-clock 6)
check "-C 1: CPUs utilized ~1 ($v)" 'awk -v v="$v" "BEGIN { exit !(v > 0.9 && v < 1.1) }"'

# 7. -p: attach, count, stop when the task exits
/hot 300 >/dev/null & pid=$!
sleep 0.1
$P stat -x, -e cycles:u -p $pid 2>/tmp/our; rc=$?
v=$(field /tmp/our cycles:u 1)
check "-p: counted cycles:u of a running task ($v), rc $rc" '[ $rc = 0 ] && [ "${v:-0}" -gt 1000000 ]'
/hot 300 >/dev/null & pid=$!
sleep 0.1
$P stat -x, -e task-clock -t $pid 2>/tmp/our; rc=$?
v=$(field /tmp/our task-clock 1)
check "-t: counted task-clock ($v)" 'awk -v v="$v" "BEGIN { exit !(v > 1) }"'

# 8. -o file, pmu/event=/ syntax, modifiers
$P stat -o /tmp/o.txt -e cycles,armv8_pmuv3/event=0x11/,cycles:k,cycles:u -- /hot 1 >/dev/null 2>&1
check "-o writes '# started on'" 'head -1 /tmp/o.txt | grep -q "^# started on "'
c=$(awk '$2 == "cycles" { print $1 }' /tmp/o.txt); p=$(awk '$2 == "armv8_pmuv3/event=0x11/" { print $1 }' /tmp/o.txt)
check "armv8_pmuv3/event=0x11/ == cycles ($p vs $c)" '[ -n "$c" ] && [ "$c" = "$p" ]'
u=$(awk '$2 == "cycles:u" { print $1 }' /tmp/o.txt); k=$(awk '$2 == "cycles:k" { print $1 }' /tmp/o.txt)
check "cycles:u + cycles:k == cycles ($u + $k vs $c)" '[ $((u + k)) = "$c" ]'

# 9. unknown PMU event -> <not supported>, bad syntax -> error
$P stat -e ref-cycles,r11 -- /bin/busybox true 2>/tmp/our
check "ref-cycles <not supported>, r11 counted" 'grep -q "<not supported>      ref-cycles" /tmp/our && ! grep -q "<not.*r11" /tmp/our'
$P stat -e no-such-event -- /bin/busybox true 2>/dev/null; rc=$?
check "unknown event name rejected ($rc)" '[ $rc != 0 ]'
CHECKS

"$REFVM" --smp 2 --icount --overlay "$W/ov" -- 'sh /checks.sh' > "$W/log" 2>&1 || true
grep -E '^(PASS|FAIL)' "$W/log" || { echo "refvm run failed"; tail -20 "$W/log"; exit 1; }
p=$(grep -c '^PASS' "$W/log" || true); f=$(grep -c '^FAIL' "$W/log" || true)
echo "refvm-stat: $p passed, $f failed"
[ "$f" = 0 ]
