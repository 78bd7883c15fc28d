#!/bin/sh
# refvm-record.sh - end-to-end check of our `perf record` on real Linux 6.1:
# run it in refvm (Debian arm64 Linux under QEMU, --icount so counts are
# deterministic) on tools/workloads/hot.c, bring perf.data back through the console
# (base64), then read it with the host's real `perf report` and `perf script`
# (linux-perf 6.1). Passes when `burn` is the top symbol and neither tool
# prints a warning. Host-side only; not part of `make test`.
#
#   tools/perf/tests/refvm-record.sh [path/to/our/perf] [extra record args...]
#     default perf: build/user/bin/perf; default args: -e cycles -c 100000
# Env: KEEP=dir keeps perf.data, the report and the script output there.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OURS=${1:-build/user/bin/perf}
[ $# -gt 0 ] && shift
ARGS=${*:-"-e cycles -c 100000"}
REFVM=${REFVM:-/work/shared/tools/refvm.sh}
CC=${CROSS:-aarch64-linux-gnu-}gcc
W=$(mktemp -d /tmp/refvm-record.XXXXXX); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/ov" "$W/symfs"
cp "$OURS" "$W/ov/perfk"
$CC -static -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -o "$W/ov/hot" "$HERE/../../workloads/hot.c"
cp "$W/ov/hot" "$W/symfs/hot"

"$REFVM" --smp 2 --icount --overlay "$W/ov" -- \
  "/perfk record $ARGS -o /tmp/perf.data -- /hot 4; echo rc=\$?; echo '@@@ b64'; base64 /tmp/perf.data; echo '@@@ end'" \
  > "$W/log" 2>&1 || true
sed -n '/^=== refvm begin/,/^@@@ b64/p' "$W/log" | grep -v '^@@@'
sed -n '/^@@@ b64/,/^@@@ end/p' "$W/log" | sed '1d;$d' | base64 -d > "$W/perf.data"
[ -s "$W/perf.data" ] || { echo "FAIL: no perf.data came back"; tail -20 "$W/log"; exit 1; }

fail=0
RFLAGS=; case " $ARGS " in *" -g "*) RFLAGS=--no-children ;; esac
perf report -i "$W/perf.data" --stdio $RFLAGS --symfs="$W/symfs" > "$W/report" 2> "$W/report.err" || fail=1
perf script -i "$W/perf.data" --symfs="$W/symfs" > "$W/script" 2> "$W/script.err" || fail=1
echo "--- host perf report --stdio (head)"; sed -n '1,40p' "$W/report"
echo "--- host perf script (head)"; sed -n '1,5p' "$W/script"
# Debian's host perf is built without arm64 libunwind, so `perf script` prints
# this line for any aarch64 perf.data, real perf's own included: not ours.
KNOWN='unwind: target platform=arm64 is not supported'
for f in report.err script.err; do
  if grep -qx "$KNOWN" "$W/$f"; then
    echo "note: $f has the host tool's known line '$KNOWN' (same for real perf's perf.data)"
    grep -vx "$KNOWN" "$W/$f" > "$W/$f.tmp" || true; mv "$W/$f.tmp" "$W/$f"
  fi
  if [ -s "$W/$f" ]; then echo "FAIL: $f:"; cat "$W/$f"; fail=1; fi
done
# System-wide (-a/-C), the idle CPU's swapper may lead: then burn must lead user space.
PAT='%'; case " $ARGS " in *" -a "*|*" -C "*) PAT='\[\.\]' ;; esac
top=$(grep -v '^#' "$W/report" | grep "$PAT" | head -1)
case $top in *'[.] burn'*) echo "PASS: top symbol: $top" ;; *) echo "FAIL: top symbol: $top"; fail=1 ;; esac
n=$(grep -c ' burn' "$W/script" || true)
echo "samples in burn (perf script): $n of $(wc -l < "$W/script")"
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$W/perf.data" "$W/report" "$W/script" "$W/symfs/hot" "$KEEP/"; fi
[ $fail = 0 ] && echo "refvm-record: PASS" || echo "refvm-record: FAIL"
exit $fail
