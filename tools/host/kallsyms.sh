#!/bin/sh
# kallsyms.sh OUT NM "LINK" "ASSEMBLE" [TABLE] - link the kernel with its own symbol table, the
# text /proc/kallsyms shows ("%016lx %c %s\n" per symbol, by address, as Linux prints it), and
# keep a copy of it in TABLE (for the host's perf report --kallsyms).
#   LINK:     the link command without -o and without the table's object (objects, libs)
#   ASSEMBLE: the compiler command for kernel/kallsyms.S without -c/-o
# The table sits in .kallsyms, after the code and before .data, so it moves only what follows
# it.  Three links, as Linux's scripts/link-vmlinux.sh: (1) an empty table; (2) the table of
# (1), whose text addresses are right but whose data addresses are not; (3) the table of (2):
# the same names in the same order at fixed width, so the same size, so (3) lays out as (2).
# The last check proves it: the table in (3) is what nm says of (3).
set -eu
out=$1 nm=$2 link=$3 asm=$4 keep=${5:-}
w=$out.kallsyms
rm -rf "$w"
mkdir -p "$w"
table() { # ELF -> the table: every symbol but absolute ones and the $x/$d mapping symbols
	"$nm" -n "$1" | awk 'NF == 3 && $2 !~ /^[aAUw]$/ && length($1) == 16 && $3 !~ /^\$/ && $3 !~ /^\.L/ {
		printf "%s %s %s\n", $1, $2, $3 }'
}
pass() { # N TABLE: assemble TABLE into the image, link to $w/N
	$asm -DKALLSYMS_FILE="\"$2\"" -c kernel/kallsyms.S -o "$w/ks$1.o"
	$link "$w/ks$1.o" -o "$w/k$1"
}
: > "$w/t0"
pass 0 "$w/t0"
table "$w/k0" > "$w/t1"
pass 1 "$w/t1"
table "$w/k1" > "$w/t2"
[ "$(wc -c < "$w/t1")" = "$(wc -c < "$w/t2")" ] || { echo "kallsyms: the table changed size" >&2; exit 1; }
pass 2 "$w/t2"
table "$w/k2" > "$w/t3"
cmp -s "$w/t2" "$w/t3" || { echo "kallsyms: the final image's symbols moved" >&2; exit 1; }
mv "$w/k2" "$out"
[ -z "$keep" ] || cp "$w/t3" "$keep"
rm -rf "$w"
