#!/bin/sh
# debian-bpftool.sh [--linux] - end to end: Debian's own arm64 bpftool 7.1 (unmodified; make
# debian-bpftool builds the overlay from what make deps downloads) inside perfkernel, with
# `t_bpf_obj hold /sys/fs/bpf` keeping a hash map "pk_counts" (keys 1..3 = 10, 20, 30), a
# tracepoint program "pk_tp" counting sched_switch hits in key 1 and a perf_event program
# "pk_sample" linked to a cpu-clock event, the map and pk_tp pinned in a bpffs.  Checked as a
# user reads them: prog show / prog list name both programs (pk_tp with the map's id), map show
# and map dump id N (the three keys, their values, "Found 3 elements"), link show (the link on
# pk_sample), prog dump xlated (the map as map[id:N], the atomic add), jited code in prog show
# (Debian's bpftool has no disassembler: "prog dump jited" says "No libbfd support" on both
# kernels), run_time_ns/run_cnt under kernel.bpf_stats_enabled, pinned paths (-f), perf (the
# hold process's fd carrying pk_tp on sched_switch), prog load + pin of a
# clang-built object into the bpffs and prog show pinned, feature probe kernel, and that
# programs go when their last fd and pin go.
# The kernel's own BTF too: btf dump file /sys/kernel/btf/vmlinux (raw, and format c with
# struct perf_event_attr as the uapi header has it); both kernels have vmlinux BTF, and every
# check passes with it visible.
# --linux runs the same guest part on Linux 6.1 under refvm.sh and applies the same checks.
# Without the overlay: FAIL when make deps has downloaded bpftool, SKIP otherwise.
set -u
BUILD=${BUILD:-build}
OV="$BUILD/debian-bpftool"
pass=0 fail=0
ok() { echo "PASS debian-bpftool: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL debian-bpftool: $1"; fail=$((fail + 1)); }
if [ ! -x "$OV/usr/sbin/bpftool" ]; then
	if ls "$BUILD"/deps/bpftool-root/.stamp-* > /dev/null 2>&1; then
		bad "no $OV/usr/sbin/bpftool although make deps downloaded bpftool (make debian-bpftool)"
	else
		echo "SKIP debian-bpftool: Debian's bpftool not downloaded (make deps debian-bpftool)"
	fi
	echo "$pass passed, $fail failed"
	[ $fail -eq 0 ]
	exit
fi
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cp -a "$OV" "$w/ov"
mkdir -p "$w/ov/bin" "$w/ov/root"
cp "$BUILD/user/bin/t_bpf_obj" "$w/ov/bin/"
cp "$BUILD/user/bpf/pagefaults.bpf.o" "$w/ov/root/"
cat > "$w/ov/root/bpftool-e2e.sh" << 'EOF'
B=/usr/sbin/bpftool
# the kernel's own BTF, as bpftool prints it
sec() { echo "=== $1"; }
sec "btf dump file"; $B btf dump file /sys/kernel/btf/vmlinux > /tmp/btf.txt; echo "BTF-RC=$?"
head -3 /tmp/btf.txt; echo "BTF-TYPES=$(grep -c '^\[[0-9]*\] ' /tmp/btf.txt)"
sec "btf dump format c"; $B btf dump file /sys/kernel/btf/vmlinux format c > /tmp/btf.h; echo "BTFC-RC=$?"
awk '$0 == "struct perf_event_attr {" { on = 1 } on && n++ < 5' /tmp/btf.h
grep -E '^struct task(_struct)? \{$' /tmp/btf.h
[ -d /sys/fs/bpf ] || mkdir -p /sys/fs/bpf
grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
t_bpf_obj hold /sys/fs/bpf > /tmp/hold.log 2>&1 &
HOLD=$!
for i in 1 2 3 4 5 6 7 8 9 10; do grep -q READY /tmp/hold.log && break; sleep 1; done
echo "HOLD=$HOLD $(cat /tmp/hold.log)"
sec "prog show"; $B prog show
sec "prog list"; $B prog list
sec "map show"; $B map show
MID=$($B map show | sed -n 's/^\([0-9]*\): hash  name pk_counts .*/\1/p')
PID=$($B prog show | sed -n 's/^\([0-9]*\): tracepoint  name pk_tp .*/\1/p')
echo "MID=$MID PID=$PID"
sec "map dump id $MID"; $B map dump id "$MID"
sec "link show"; $B link show
sec "prog dump xlated id $PID"; $B prog dump xlated id "$PID"
sec "prog dump jited id $PID"; $B prog dump jited id "$PID" 2>&1
sec "prog show id $PID -j"; $B -j prog show id "$PID"; echo
sec "perf"; $B perf
sec "stats"; echo 1 > /proc/sys/kernel/bpf_stats_enabled; sleep 1; $B prog show id "$PID"
echo 0 > /proc/sys/kernel/bpf_stats_enabled
sec "prog show -f"; $B -f prog show id "$PID"; $B -f map show id "$MID"
sec "prog load"; $B prog load /root/pagefaults.bpf.o /sys/fs/bpf/pf; echo "LOAD-RC=$?"
sec "btf show"; $B btf show
sec "btf dump prog pinned /sys/fs/bpf/pf"; $B btf dump prog pinned /sys/fs/bpf/pf
sec "prog dump xlated pinned /sys/fs/bpf/pf"; $B prog dump xlated pinned /sys/fs/bpf/pf
sec "ls /sys/fs/bpf"; ls -1 /sys/fs/bpf
sec "prog show pinned /sys/fs/bpf/pf"; $B prog show pinned /sys/fs/bpf/pf
sec "map dump pinned /sys/fs/bpf/pk_counts"; $B map dump pinned /sys/fs/bpf/pk_counts
sec "feature probe kernel"; $B feature probe kernel > /tmp/feat.txt 2>&1; echo "FEAT-RC=$?"
grep -E "is (NOT )?available|JIT|syscall" /tmp/feat.txt | grep -v "helper"
sec "helpers of perf_event"
awk '/^eBPF helpers supported for program type perf_event:$/ { on = 1; next } !/^	/ { on = 0 } on' /tmp/feat.txt
rm /sys/fs/bpf/pf
kill $HOLD
wait $HOLD
sleep 1 # Linux frees a program's maps after an RCU grace period
sec "prog show after the holder's exit"; $B prog show
rm /sys/fs/bpf/pk_tp /sys/fs/bpf/pk_counts
sleep 1
sec "prog show after unpinning"; $B prog show
sec "map show after unpinning"; $B map show
echo "=== DONE"
EOF
if [ "${1:-}" = --linux ]; then
	where="Linux 6.1"
	REFVM_QEMU_ARGS="-nic none" timeout 600 sh ../shared/tools/refvm.sh --smp 2 --overlay "$w/ov" -- \
		'sh /root/bpftool-e2e.sh' > "$w/run.log" 2>&1
else
	where=perfkernel
	SMP=2 TIMEOUT=300 OVERLAY="$w/ov" sh tools/host/run.sh "$BUILD/perfkernel.img" \
		"$BUILD/initramfs.cpio" 'sh /root/bpftool-e2e.sh' > "$w/run.log" 2>&1
fi
L="$w/run.log"
# the section of the log after "=== NAME" up to the next "=== "
sec() { awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on' "$L"; }
echo "# bpftool on $where:"
sed -n '/^=== prog show$/,/^=== DONE/p' "$L" | grep -v '^eBPF helper\|^	- ' | sed 's/^/#   /'
grep -q '^=== DONE' "$L" || { bad "the guest run ended early"; tail -20 "$L"; }
b=$(sec "btf dump file")
nt=$(printf '%s\n' "$b" | sed -n 's/^BTF-TYPES=//p')
printf '%s\n' "$b" | grep -q '^BTF-RC=0$' && printf '%s\n' "$b" | grep -Eq "^\[1\] [A-Z_]+ '" && [ "${nt:-0}" -gt 100 ] &&
	ok "btf dump file /sys/kernel/btf/vmlinux: $nt types" || bad "btf dump file: $(printf '%s\n' "$b" | head -3)"
c=$(sec "btf dump format c")
printf '%s\n' "$c" | grep -q '^BTFC-RC=0$' &&
	[ "$(printf '%s\n' "$c" | sed -n '/^struct perf_event_attr {$/,$p' | head -4 | tr '\t\n' '  ')" = \
		"struct perf_event_attr {  __u32 type;  __u32 size;  __u64 config; " ] &&
	ok "btf dump format c: struct perf_event_attr { __u32 type; __u32 size; __u64 config; ... ($(printf '%s\n' "$c" | grep '^struct task'))" ||
	bad "btf dump format c: $(printf '%s\n' "$c" | head -6 | tr '\n' ' ')"
grep -q '^HOLD=[0-9]* READY' "$L" && ok "t_bpf_obj hold loaded and pinned its objects" || bad "the holder: $(grep '^HOLD' "$L")"
hold=$(sed -n 's/^HOLD=\([0-9]*\) .*/\1/p' "$L")
mid=$(sed -n 's/^MID=\([0-9]*\) PID=.*/\1/p' "$L")
pid=$(sed -n 's/^MID=[0-9]* PID=\([0-9]*\)$/\1/p' "$L")
ps=$(sec "prog show")
sid=$(printf '%s\n' "$ps" | sed -n 's/^\([0-9]*\): perf_event  name pk_sample  tag [0-9a-f]\{16\}  gpl$/\1/p')
[ -n "$pid" ] && [ -n "$mid" ] && printf '%s\n' "$ps" | grep -q "^$pid: tracepoint  name pk_tp  tag [0-9a-f]\{16\}  gpl$" &&
	printf '%s\n' "$ps" | grep -Eq "^	xlated [0-9]+B  jited [0-9]+B  memlock 4096B  map_ids $mid$" &&
	ok "prog show: $pid: tracepoint pk_tp, jited, map_ids $mid" || bad "prog show: no pk_tp with map $mid"
[ -n "$sid" ] && ok "prog show: $sid: perf_event pk_sample" || bad "prog show: no pk_sample"
printf '%s\n' "$ps" | grep -Eq "^	loaded_at 20[0-9-]+T[0-9:]+\+0000  uid 0$" && ok "prog show: loaded_at (a date) and uid 0" ||
	bad "prog show: loaded_at / uid line"
[ -n "$ps" ] && [ "$ps" = "$(sec "prog list")" ] && ok "prog list shows what prog show shows" || bad "prog list differs"
sec "map show" | grep -q "^$mid: hash  name pk_counts  flags 0x0$" &&
	sec "map show" | grep -q "^	key 4B  value 8B  max_entries 16  memlock 4096B$" &&
	ok "map show: $mid: hash pk_counts, key 4B value 8B max_entries 16" || bad "map show"
d=$(sec "map dump id $mid")
printf '%s\n' "$d" | grep -q '^key: 02 00 00 00  value: 14 00 00 00 00 00 00 00$' &&
	printf '%s\n' "$d" | grep -q '^key: 03 00 00 00  value: 1e 00 00 00 00 00 00 00$' &&
	printf '%s\n' "$d" | grep -q '^Found 3 elements$' && ok "map dump id $mid: keys 2 and 3 hold 20 and 30, 3 elements" ||
	bad "map dump id $mid"
k1=$(printf '%s\n' "$d" | sed -n 's/^key: 01 00 00 00  value: \(..\) \(..\) \(..\) .*/\3\2\1/p')
[ -n "$k1" ] && [ $((0x$k1)) -gt 10 ] && ok "map dump: key 1 counted sched_switch hits ($((0x$k1)) > 10)" ||
	bad "map dump: key 1 = '$k1'"
sec "link show" | grep -Eq "^[0-9]+: perf_event  prog $sid *$" && ok "link show: a perf_event link on prog $sid" ||
	bad "link show"
x=$(sec "prog dump xlated id $pid")
printf '%s\n' "$x" | grep -Eq "^ +1: \(18\) r1 = map\[id:$mid\]$" &&
	printf '%s\n' "$x" | grep -Eq "^ +[0-9]+: \(85\) call (bpf_map_lookup_elem|__htab_map_lookup_elem)#-?[0-9]+$" &&
	printf '%s\n' "$x" | grep -Eq "^ +[0-9]+: \(db\) lock \*\(u64 \*\)\(r0 \+0\) \+= r1$" &&
	ok "prog dump xlated: r1 = map[id:$mid], the lookup call, the atomic add" || bad "prog dump xlated"
sec "prog dump jited id $pid" | grep -q "No libbfd support" &&
	sec "prog show id $pid -j" | grep -Eq "\"jited\":true,\"bytes_jited\":[1-9][0-9]*," &&
	ok "prog dump jited: Debian's bpftool has no disassembler; the program is jited (bytes_jited)" ||
	bad "jited: $(sec "prog dump jited id $pid" | head -2) $(sec "prog show id $pid -j")"
sec "stats" | grep -Eq "^$pid: tracepoint  name pk_tp  tag [0-9a-f]{16}  gpl run_time_ns [1-9][0-9]* run_cnt [1-9][0-9]*$" &&
	ok "kernel.bpf_stats_enabled = 1: prog show adds run_time_ns and run_cnt" || bad "stats: $(sec stats | head -1)"
sec "prog show -f" | grep -q "^	pinned /sys/fs/bpf/pk_tp$" && sec "prog show -f" | grep -q "^	pinned /sys/fs/bpf/pk_counts$" &&
	ok "-f: prog show and map show name the pins" || bad "-f: $(sec "prog show -f")"
sec "perf" | grep -Eq "^pid $hold  fd [0-9]+: prog_id $pid  tracepoint  sched_switch$" &&
	ok "perf: pid $hold's fd carries prog $pid on tracepoint sched_switch" || bad "perf: $(sec perf)"
grep -q '^LOAD-RC=0$' "$L" && sec "prog show pinned /sys/fs/bpf/pf" | grep -Eq '^[0-9]+: perf_event  name on_overflow  tag [0-9a-f]{16}  gpl$' &&
	ok "prog load pagefaults.bpf.o /sys/fs/bpf/pf; prog show pinned names on_overflow" || bad "prog load / pinned"
[ "$(sec "ls /sys/fs/bpf" | tr '\n' ' ')" = "pf pk_counts pk_tp " ] && ok "ls /sys/fs/bpf: pf pk_counts pk_tp" ||
	bad "ls /sys/fs/bpf: $(sec "ls /sys/fs/bpf" | tr '\n' ' ')"
# libbpf loaded the object's BTF (BTF_LOAD) and gave its func_info and line_info with the program
sec "btf show" | grep -Eq '^[0-9]+: name <anon>  size [0-9]+B  prog_ids [0-9]+' &&
	ok "btf show: the object's BTF, with its program" || bad "btf show: $(sec "btf show" | head -3)"
sec "btf dump prog pinned /sys/fs/bpf/pf" | grep -q "^\[[0-9]*\] FUNC 'on_overflow' type_id=[0-9]* linkage=global$" &&
	ok "btf dump prog: FUNC 'on_overflow'" || bad "btf dump prog: $(sec "btf dump prog pinned /sys/fs/bpf/pf" | head -5)"
sec "prog dump xlated pinned /sys/fs/bpf/pf" | grep -q '^int on_overflow(' &&
	sec "prog dump xlated pinned /sys/fs/bpf/pf" | grep -q '^; ' &&
	ok "prog dump xlated: the function's prototype and source lines (func_info, line_info)" ||
	bad "prog dump xlated: $(sec "prog dump xlated pinned /sys/fs/bpf/pf" | head -5)"
sec "map dump pinned /sys/fs/bpf/pk_counts" | grep -q '^Found 3 elements$' && ok "map dump pinned /sys/fs/bpf/pk_counts" ||
	bad "map dump pinned"
f=$(sec "feature probe kernel")
printf '%s\n' "$f" | grep -q '^FEAT-RC=0$' && printf '%s\n' "$f" | grep -q '^JIT compiler is enabled$' &&
	printf '%s\n' "$f" | grep -q '^eBPF program_type perf_event is available$' &&
	printf '%s\n' "$f" | grep -q '^eBPF program_type tracepoint is available$' &&
	printf '%s\n' "$f" | grep -q '^eBPF map_type hash is available$' &&
	printf '%s\n' "$f" | grep -q '^eBPF map_type ringbuf is available$' &&
	ok "feature probe kernel: JIT enabled; perf_event and tracepoint programs, hash and ringbuf maps available" ||
	bad "feature probe kernel"
h=$(sec "helpers of perf_event")
printf '%s\n' "$h" | grep -q '^	- bpf_perf_event_output$' && printf '%s\n' "$h" | grep -q '^	- bpf_get_stackid$' &&
	printf '%s\n' "$h" | grep -q '^	- bpf_ringbuf_output$' &&
	ok "feature probe kernel: perf_event helpers include perf_event_output, get_stackid, ringbuf_output ($(printf '%s\n' "$h" | grep -c '^	- '))" ||
	bad "feature probe: perf_event helpers"
a=$(sec "prog show after the holder's exit")
printf '%s\n' "$a" | grep -q "^$pid: tracepoint  name pk_tp" && ! printf '%s\n' "$a" | grep -q 'pk_sample\|on_overflow' &&
	ok "after the holder's exit: pinned pk_tp stays, pk_sample and the unpinned on_overflow are gone" ||
	bad "after the holder's exit: $a"
[ -z "$(sec "prog show after unpinning")" ] && [ -z "$(sec "map show after unpinning")" ] &&
	ok "after unpinning: no programs, no maps" || bad "after unpinning: $(sec "prog show after unpinning") $(sec "map show after unpinning")"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
