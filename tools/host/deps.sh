#!/bin/sh
# deps.sh - install what the build needs from Debian's packages, idempotently.
#
#   tools/host/deps.sh BUILD_DIR
#
# Host packages are installed with apt-get only when one is missing (apt-get update first then).
# Debian's arm64 packages the guest side needs (libfdt for the kernel, busybox-static for the
# initramfs, libbpf/libelf/zlib for static BPF clients) are downloaded with apt-get's
# architecture options into BUILD_DIR/deps and unpacked there; the machine's dpkg architecture
# list is never changed.  Debian's own arm64 perf (linux-perf) and the libraries it links go to
# BUILD_DIR/deps/perf-root the same way (tools/host/debian-perf.sh makes an overlay of them), and
# Debian's arm64 strace with its libraries to BUILD_DIR/deps/strace-root (debian-strace.sh),
# Debian's bpftool to BUILD_DIR/deps/bpftool-root (debian-bpftool.sh), and
# Debian's arm64 bpftrace with LLVM and its other libraries to BUILD_DIR/deps/bpftrace-root
# (debian-bpftrace.sh; about 55 MB of packages, 230 MB unpacked).
set -eu
B=${1:-build}
# (dwarves: pahole, which encodes the kernel's BTF, tools/host/btf.sh)
HOST_PKGS="qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross
  libcmocka-dev libfdt-dev device-tree-compiler cpio linux-perf valgrind clang llvm qemu-user
  dwarves"
ARM64_PKGS="libfdt-dev libfdt1 busybox-static libbpf-dev libbpf1 libelf-dev libelf1 zlib1g-dev zlib1g libzstd-dev"
# linux-perf and the packages of every shared library it needs (its NEEDED closure, less glibc,
# libstdc++ and libgcc_s, which the cross toolchain's Debian arm64 copies provide)
PERF_PKGS="linux-perf libbabeltrace1 libcap2 libdw1 libelf1 liblzma5 libnuma1 libopencsd1
  libperl5.36 libpython3.11 libslang2 libunwind8 libzstd1 zlib1g libglib2.0-0 libuuid1 libbz2-1.0
  libcrypt1 libexpat1 libpcre2-8-0"
# strace (its arm64 build needs nothing beyond glibc)
STRACE_PKGS="strace"
# bpftool 7.1 (libbpf is linked in; its Depends: libcap2, libelf1, zlib1g)
BPFTOOL_PKGS="bpftool libcap2 libelf1 zlib1g"
# bpftrace 0.17 and the packages of its Depends closure for arm64 (LLVM 14, clang 14, bcc's
# libbpfcc, libbpf, libdw...), less glibc, libstdc++ and libgcc_s as for perf; and the
# kernel's uapi headers (linux-libc-dev), which bpftrace's clang parses for tracepoint: probes
# when the kernel has no BTF
BPFTRACE_PKGS="bpftrace libbpf1 libbpfcc libclang1-14 libclang-cpp14 libllvm14 libdw1 libelf1
  libedit2 libbsd0 libmd0 libffi8 libtinfo6 libxml2 libicu72 liblzma5 libz3-4 zlib1g libbz2-1.0
  linux-libc-dev"

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

missing=
for p in $HOST_PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

A="$B/deps"
case "$A" in /*) AABS=$A ;; *) AABS=$(pwd)/$A ;; esac # apt's directories: absolute
stamp="$A/arm64/.stamp-$(echo $ARM64_PKGS | tr ' ' '_')"
if [ ! -f "$stamp" ]; then
	mkdir -p "$A/apt/lists/partial" "$A/apt/cache/archives/partial" "$A/debs" "$A/arm64"
	APT="-oAPT::Architecture=arm64 -oAPT::Architectures=arm64 -oDir::State::Lists=$AABS/apt/lists
	     -oDir::Cache=$AABS/apt/cache -oAPT::Sandbox::User=root -qq"
	echo "deps: downloading arm64 packages: $ARM64_PKGS" >&2
	apt-get $APT update
	(cd "$A/debs" && apt-get $APT download $ARM64_PKGS)
	for d in "$A"/debs/*.deb; do dpkg-deb -x "$d" "$A/arm64"; done
	touch "$stamp"
fi

# What perf's own shell tests run besides perf (tools/perf/perf-test-compare.sh adds them to the
# overlay, as a Debian root has them): bash, coreutils, grep, sed, gawk, binutils' addr2line, and
# python3 (test 19 imports linux-perf's python module with it).
TESTENV_PKGS="bash libtinfo6 coreutils libacl1 libattr1 libselinux1 libpcre2-8-0 libgmp10 grep
  sed gawk libmpfr6 libsigsegv2 libreadline8 binutils binutils-aarch64-linux-gnu libbinutils
  libctf0 libctf-nobfd0 libgprofng0 libjansson4 zlib1g libzstd1
  python3 python3.11 python3-minimal python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
  libexpat1 libffi8 libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libuuid1 libncursesw6 media-types
  libdb5.3 libnsl2 libtirpc3 libcrypt1 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
  libcom-err2 libkeyutils1"
# fetch_root NAME "PKGS": download PKGS into $A/debs-NAME and unpack them all into $A/NAME-root
fetch_root() {
	# the stamp names the list by its hash (the names themselves overflow a file name)
	stamp="$A/$1-root/.stamp-$(echo $2 | md5sum | cut -c1-16)"
	[ -f "$stamp" ] && return 0
	rm -rf "$A/$1-root" "$A/debs-$1"
	mkdir -p "$A/apt/lists/partial" "$A/apt/cache/archives/partial" "$A/debs-$1" "$A/$1-root"
	APT="-oAPT::Architecture=arm64 -oAPT::Architectures=arm64 -oDir::State::Lists=$AABS/apt/lists
	     -oDir::Cache=$AABS/apt/cache -oAPT::Sandbox::User=root -qq"
	echo "deps: downloading Debian's arm64 $1 and its libraries" >&2
	[ -n "$(ls "$A/apt/lists" 2>/dev/null | grep -v partial)" ] || apt-get $APT update
	(cd "$A/debs-$1" && apt-get $APT download $2)
	for d in "$A/debs-$1"/*.deb; do dpkg-deb -x "$d" "$A/$1-root"; done
	touch "$stamp"
}
fetch_root perf "$PERF_PKGS"
fetch_root strace "$STRACE_PKGS"
fetch_root bpftool "$BPFTOOL_PKGS"
fetch_root bpftrace "$BPFTRACE_PKGS"
fetch_root testenv "$TESTENV_PKGS"
