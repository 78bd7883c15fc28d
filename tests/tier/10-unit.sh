#!/bin/sh
# Tier 1: host cmocka tests of every portable file (ASan + UBSan).
exec sh tests/unit/run.sh "${BUILD:-build}"/unit/test_*
