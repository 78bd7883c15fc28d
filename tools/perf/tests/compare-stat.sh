#!/bin/sh
# compare-stat.sh - run real Linux `perf stat` 6.1 and our tools/perf `perf stat`
# on the same workloads inside refvm (Debian arm64 Linux 6.1 under QEMU) and
# diff the SHAPE of their output: every number is replaced by N tagged with
# the column where it ends, so labels, widths, alignment, metric units,
# <not supported>/<not counted> and CSV fields must match exactly while the
# values may differ. Host-side only; not part of `make test`.
#
#   tools/perf/tests/compare-stat.sh [path/to/our/perf]    (default build/user/bin/perf)
# COMPARE_LOG=file keeps the raw console log (both outputs of every case).
# Exit 0 when every case has the same shape.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OURS=${1:-build/user/bin/perf}
REFVM=${REFVM:-/work/shared/tools/refvm.sh}
CC=${CROSS:-aarch64-linux-gnu-}gcc
W=$(mktemp -d /tmp/compare-stat.XXXXXX); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/ov"
cp "$OURS" "$W/ov/perfk"
$CC -static -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -o "$W/ov/hot" "$HERE/../../workloads/hot.c"

# One perf stat argument list per line; "rc" suffix cases also print the exit code.
cat > "$W/ov/cases" <<'CASES'
stat -- /bin/busybox true
stat -e cycles,instructions,task-clock,page-faults,context-switches,cpu-migrations -- /bin/busybox true
stat -x, -- /bin/busybox true
stat -r 3 -e cycles,task-clock -- /bin/busybox true
stat -x, -r 3 -e cycles,task-clock -- /bin/busybox true
stat -a -e cycles,task-clock,cs -- /bin/busybox sleep 0.1
stat -e cycles,cycles:u,cycles:k,r11,cache-misses,ref-cycles,stalled-cycles-frontend,bus-cycles,branch-misses,cpu-clock,faults,minor-faults,major-faults,alignment-faults,emulation-faults,dummy,armv8_pmuv3/event=0x11/ -- /bin/busybox true
stat -e cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles -- /bin/busybox true
stat -x, -e cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,ref-cycles -- /bin/busybox true
stat -e instructions,cycles -- /bin/busybox false
stat -e cycles -C 0 -- /bin/busybox true
stat -e cycles -x; -a -- /bin/busybox true
stat -e cycles -- /bin/nonexistent
stat -e cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,task-clock -- /hot 20
stat -x, -e cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles -- /hot 20
stat -e branch-misses,branches,cache-misses,cache-references,instructions,stalled-cycles-backend -- /hot 2
stat -r 2 -x, -e cycles,ref-cycles -- /hot 1
CASES

cat > "$W/ov/run.sh" <<'RUN'
i=0
while IFS= read -r args; do
  i=$((i+1))
  for who in ref ours; do
    if [ $who = ref ]; then p=perf; else p=/perfk; fi
    echo "@@@ $i $who"
    $p $args 2>&1; echo "rc=$?"
    # -o and -p are checked separately below
  done
done < /cases
for who in ref ours; do
  if [ $who = ref ]; then p=perf; else p=/perfk; fi
  i=$((i+1)); echo "@@@ $i $who"
  $p stat -o /tmp/o.txt -e task-clock -- /bin/busybox true; echo "rc=$?"; cat /tmp/o.txt
  i=$((i+1)); echo "@@@ $i $who"
  /hot 600 >/dev/null & pid=$!; sleep 0.1
  $p stat -e cycles -p $pid 2>&1; echo "rc=$?"
  i=$((i+1)); echo "@@@ $i $who"
  /hot 600 >/dev/null & pid=$!; sleep 0.1
  $p stat -e task-clock,cycles:u -t $pid 2>&1; echo "rc=$?"
  i=$((i+1)); echo "@@@ $i $who"
  timeout -s INT 1 $p stat -a -e task-clock,cycles,cs 2>&1; echo "rc=$?"
  i=$((i-4))
done
echo "@@@ end"
RUN

# Passed inline as the guest's command (real perf -p failed to find the task's
# /proc/PID/task when run from a nested `sh /run.sh`; inline it works).
"$REFVM" --smp 2 --icount --overlay "$W/ov" -- "$(cat "$W/ov/run.sh")" > "$W/log" 2>&1 || true
[ -z "${COMPARE_LOG:-}" ] || cp "$W/log" "$COMPARE_LOG"
[ -s "$W/log" ] && grep -q '^@@@ end' "$W/log" || { echo "refvm run failed:"; tail -20 "$W/log"; exit 1; }

python3 - "$W/log" <<'PY'
import re, sys
cases = {}
cur = None
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    m = re.match(r'^@@@ (\S+)(?: (\S+))?$', line)
    if m:
        cur = (m.group(1), m.group(2)) if m.group(2) else None
        if cur: cases.setdefault(cur[0], {})[cur[1]] = []
        continue
    if cur and not line.startswith('=== refvm'):
        cases[cur[0]][cur[1]].append(line)

def shape(lines):
    out = []
    for l in lines:
        if l.startswith('hot: '):
            continue
        if ',' in l and '  ' not in l or ';' in l:   # CSV: numbers only
            out.append(re.sub(r'[0-9][0-9.]*', 'N', l))
            continue
        l = re.sub(r'(started on ).*', r'\1DATE', l)
        l = re.sub(r'[0-9]+ runs', 'R runs', l)
        l = re.sub(r"(process id ')[0-9]+", r'\1PID', l)
        # -r elapsed line: the precision depends on the stddev
        l = re.sub(r'^ +[0-9.]+ \+- [0-9.]+ seconds', 'ELAPSED +- SD seconds', l)
        l = re.sub(r' *[0-9][0-9.,]*', lambda m: 'N@%d' % m.end(), l)
        out.append(l)
    return out

bad = 0
for k in sorted(cases, key=int):
    r, o = cases[k].get('ref', []), cases[k].get('ours', [])
    sr, so = shape(r), shape(o)
    if sr == so:
        print('case %s: same shape' % k)
        continue
    bad += 1
    print('case %s: DIFFERENT' % k)
    import difflib
    for d in difflib.unified_diff(sr, so, 'real perf', 'ours', lineterm='', n=1):
        print('   ', d)
print('%d of %d cases differ' % (bad, len(cases)))
sys.exit(1 if bad else 0)
PY
