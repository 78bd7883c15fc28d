#!/bin/sh
# Tier 1: the layering (tools/host/check-layers.sh): what perf/ and bpf/ include, and every
# header compiling on its own.
exec sh tools/host/check-layers.sh
