# bpf/ sources: portable files go in PSRCS (kernel and host tests), kernel-only ones in KSRCS.
PSRCS +=
