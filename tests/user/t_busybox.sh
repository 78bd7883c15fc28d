#!/bin/sh
# t_busybox.sh: shell-level smoke test run by busybox sh: pipes, redirection,
# subshells, ls -l, cat, wc, sleep, background jobs + wait, exit codes.
# Prints PASS/FAIL lines like the C tests; exit status 0 iff no FAIL.
# Passes on Linux 6.1 (refvm.sh --smp 4), 2026-11-29 (also --smp 1, --icount, REFVM_CPU=cortex-a72).
P=t_busybox.sh
fails=0 npass=0
pass() { echo "PASS $P: $1"; npass=$((npass + 1)); }
fail() { echo "FAIL $P: $1: $2"; fails=$((fails + 1)); }
# check WHAT GOT WANT
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2' want '$3'"; fi; }

D=/tmp/t_busybox.$$
rm -rf "$D"
if mkdir "$D" && cd "$D"; then pass "mkdir + cd work dir"; else fail "mkdir + cd work dir" "rc $?"; exit 1; fi

check "echo" "$(echo hello)" "hello"
check "pipe echo | cat" "$(echo piped | cat)" "piped"
check "3-stage pipe" "$(printf 'b\na\nc\n' | sort | head -n 1)" "a"
check "pipe exit status is last command's" "$(false | true; echo $?)" "0"
check "pipe exit status of failing last" "$(true | false; echo $?)" "1"

echo line1 > f.txt
echo line2 >> f.txt
check "redirect > and >> into a file" "$(cat f.txt)" "line1
line2"
check "wc -l" "$(wc -l < f.txt | tr -d ' ')" "2"
check "wc -c" "$(wc -c < f.txt | tr -d ' ')" "12"
check "input redirect <" "$(head -n 1 < f.txt)" "line1"
ls nosuchfile 2> err.txt
check "stderr redirect 2> (nonempty)" "$( [ -s err.txt ] && echo yes)" "yes"
check "2>&1 into pipe" "$(ls nosuchfile 2>&1 | wc -l | tr -d ' ')" "1"
cat <<EOF > here.txt
heredoc $P
EOF
check "here-document" "$(cat here.txt)" "heredoc $P"
check "cat multiple files" "$(cat f.txt here.txt | wc -l | tr -d ' ')" "3"

x=outer
( x=inner; exit 3 )
rc=$?
check "subshell exit code" "$rc" "3"
check "subshell does not change parent vars" "$x" "outer"
check "subshell cd does not leak" "$( (cd /; pwd); pwd)" "/
$D"
check "command substitution nested" "$(echo $(echo $(echo deep)))" "deep"

ls -l f.txt > ls.txt
check "ls -l shows regular file mode" "$(cut -c1 ls.txt)" "-"
check "ls -l shows size 12" "$(awk '{print $5}' ls.txt)" "12"
mkdir sub
check "ls -l dir entry starts with d" "$(ls -ld sub | cut -c1)" "d"
ln -s f.txt lnk
check "ls -l symlink shows ->" "$(ls -l lnk | sed 's/.* -> //')" "f.txt"
check "ls lists files" "$(ls | tr '\n' ' ')" "err.txt f.txt here.txt lnk ls.txt sub "

t0=$(date +%s)
sleep 1
t1=$(date +%s)
check "sleep 1 takes >= 1s" "$( [ $((t1 - t0)) -ge 1 ] && echo ok)" "ok"

sleep 1 &
bg=$!
( sleep 0; exit 7 ) &
bg2=$!
check "background job has a pid" "$( [ "$bg" -gt 0 ] && echo ok)" "ok"
wait $bg2
check "wait PID returns its exit code" "$?" "7"
wait $bg
check "wait for sleep job" "$?" "0"
echo bgdata > bg.txt &
wait
check "wait (all) then the job's file exists" "$(cat bg.txt)" "bgdata"

sh -c 'exit 42'
check "sh -c exit 42" "$?" "42"
# (in a subshell with stderr dropped: the shell reports "Terminated")
rc=$( { sh -c 'kill -TERM $$'; echo $?; } 2>/dev/null )
check "child killed by SIGTERM -> 143" "$rc" "143"
false
check "false -> 1" "$?" "1"
nosuchcommand_xyz 2>/dev/null
check "missing command -> 127" "$?" "127"
if true && ! false; then pass "&& and !"; else fail "&& and !" "no"; fi
check "|| short-circuit" "$(false || echo alt)" "alt"
check "arithmetic" "$((6 * 7))" "42"
i=0; while [ $i -lt 5 ]; do i=$((i + 1)); done
check "while loop" "$i" "5"
check "for loop over glob" "$(for f in *.txt; do printf '%s,' "$f"; done)" "bg.txt,err.txt,f.txt,here.txt,ls.txt,"
check "grep -c" "$(grep -c line f.txt)" "2"
check "env var to child" "$(FOO=bar sh -c 'echo $FOO')" "bar"
check "exec in subshell" "$(sh -c 'exec echo execd')" "execd"
check "read builtin from pipe" "$(echo 'a b' | { read p q; echo "$q"; })" "b"
# the kernel log: a /dev/kmsg record comes back through dmesg (syslog(2) READ_ALL), its
# "<prio>" stripped and "[seconds]" in front
echo "<6>t_busybox.sh marker $$" > /dev/kmsg
check "dmesg shows a /dev/kmsg record" \
	"$(dmesg | grep "t_busybox.sh marker $$" | sed 's/^\[ *[0-9]*\.[0-9]*\] //')" "t_busybox.sh marker $$"

cd /
rm -rf "$D"
check "cleanup" "$( [ -e "$D" ] || echo gone)" "gone"
echo "# $P: $npass pass, $fails fail, 0 skip"
[ "$fails" -eq 0 ]
