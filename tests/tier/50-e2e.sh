#!/bin/sh
# Tier 4: end to end: perf record inside the guest, the host's real perf report/script read it.
exec sh tests/e2e/record-report.sh
