# arch/arm64: assembly in ASRCS, C in KSRCS (kernel only).
ASRCS +=
KSRCS +=
