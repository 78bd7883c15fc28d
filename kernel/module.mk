# kernel/: portable files in PSRCS, kernel-only in KSRCS.
PSRCS +=
KSRCS +=
