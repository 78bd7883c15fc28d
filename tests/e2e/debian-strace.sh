#!/bin/sh
# debian-strace.sh - end to end: Debian's own arm64 strace 6.1 (unmodified; make debian-strace
# builds the overlay from what make deps downloads) traces tools/workloads/forkecho inside
# perfkernel with -f: the output names execve, the clone and its child's pid, both writes with
# their strings, wait4's status, both exit_groups and the "+++ exited with N +++" lines, and
# strace exits with the program's status.  strace's own start-up probes (-d) must find
# PTRACE_SEIZE and PTRACE_GET_SYSCALL_INFO working.  Without the overlay: FAIL when make deps
# has downloaded strace (it should have been built), SKIP otherwise.
set -u
BUILD=${BUILD:-build}
OV="$BUILD/debian-strace"
pass=0 fail=0
ok() { echo "PASS debian-strace: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL debian-strace: $1"; fail=$((fail + 1)); }
if [ ! -x "$OV/usr/bin/strace" ]; then
	if ls "$BUILD"/deps/strace-root/.stamp-* > /dev/null 2>&1; then
		bad "no $OV/usr/bin/strace although make deps downloaded strace (make debian-strace)"
	else
		echo "SKIP debian-strace: Debian's strace not downloaded (make deps debian-strace)"
	fi
	echo "$pass passed, $fail failed"
	[ $fail -eq 0 ]
	exit
fi
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/out"
SMP=2 TIMEOUT=180 OVERLAY="$OV" OUTDIR="$w/out" sh tools/host/run.sh "$BUILD/perfkernel.img" \
	"$BUILD/initramfs.cpio" '
strace -V | head -n 1
strace -f -o /out/trace.txt forkecho > /out/stdout.txt
echo "STRACE-RC=$?"
strace -d -o /dev/null true 2> /out/debug.txt
echo DONE' > "$w/run.log" 2>&1
t="$w/out/trace.txt"
grep -q '^strace -- version 6\.' "$w/run.log" && ok "$(grep '^strace -- version' "$w/run.log")" ||
	{ bad "strace -V"; tail -20 "$w/run.log"; }
grep -q '^DONE' "$w/run.log" || { bad "the guest run ended early"; tail -20 "$w/run.log"; }
grep -q '^STRACE-RC=7' "$w/run.log" && ok "strace exits with the program's status 7" ||
	bad "strace's status: $(grep STRACE-RC "$w/run.log")"
echo "# strace -f forkecho:"
sed 's/^/#   /' "$t" 2> /dev/null
# With -f, a call that another task's line interrupts is printed in two parts on Linux too:
# "PID write(1, ... 15 <unfinished ...>" and later "PID <... write resumed>) = 15".  Join each
# pair into the one line strace prints when nothing interrupts it, then check the joined text.
awk '{
	pid = $1
	if (sub(/ <unfinished \.\.\.>$/, "")) { part[pid] = $0; next }
	if (pid in part && match($0, /<\.\.\. [a-z0-9_]+ resumed>/)) {
		$0 = part[pid] substr($0, RSTART + RLENGTH); delete part[pid]
	}
	print
}' "$t" > "$w/joined.txt" 2> /dev/null
t="$w/joined.txt"
# -f with -o: every line starts with the pid
parent=$(awk '/execve\("\/bin\/forkecho"/ { print $1; exit }' "$t" 2> /dev/null)
[ -n "$parent" ] && grep -Eq "^$parent +execve\(\"/bin/forkecho\", \[\"forkecho\"\], .*\) = 0$" "$t" &&
	ok "execve(\"/bin/forkecho\", [\"forkecho\"], ...) = 0 (pid $parent)" || bad "no execve line"
child=$(sed -n "s/^$parent \{1,\}clone3\{0,1\}(.* = \([0-9][0-9]*\)\$/\1/p" "$t" 2> /dev/null | head -n 1)
[ -n "$child" ] && [ "$child" != "$parent" ] && ok "clone(...) = $child in the parent" ||
	bad "no clone line returning the child's pid"
c=${child:-none}
grep -Eq "^$c +write\(1, \"forkecho child\\\\n\", 15\) += 15$" "$t" &&
	ok "the child's write(1, \"forkecho child...\", 15) = 15" || bad "the child's write"
grep -Eq "^$parent +write\(1, \"forkecho parent\\\\n\", 16\) += 16$" "$t" &&
	ok "the parent's write(1, \"forkecho parent...\", 16) = 16" || bad "the parent's write"
grep -Eq "^$parent +wait4.*WEXITSTATUS\(s\) == 3.* = $c$" "$t" &&
	ok "wait4 returns the child with WEXITSTATUS 3" || bad "the wait4 line"
grep -Eq "^$c +exit_group\(3\) += \?$" "$t" && grep -Eq "^$parent +exit_group\(7\) += \?$" "$t" &&
	ok "exit_group(3) in the child, exit_group(7) in the parent" || bad "the exit_group lines"
grep -Eq "^$c +\+\+\+ exited with 3 \+\+\+$" "$t" && grep -Eq "^$parent +\+\+\+ exited with 7 \+\+\+$" "$t" &&
	ok "+++ exited with 3 +++ and +++ exited with 7 +++" || bad "the +++ exited lines"
grep -q '^forkecho child$' "$w/out/stdout.txt" && grep -q '^forkecho parent$' "$w/out/stdout.txt" &&
	ok "the program's own output is intact" || bad "the program's output"
grep -q 'PTRACE_GET_SYSCALL_INFO works' "$w/out/debug.txt" && ! grep -q "PTRACE_SEIZE doesn't work" "$w/out/debug.txt" &&
	ok "strace's probes: PTRACE_SEIZE and PTRACE_GET_SYSCALL_INFO work" ||
	{ bad "strace's probes"; grep -i 'ptrace' "$w/out/debug.txt" | head; }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
