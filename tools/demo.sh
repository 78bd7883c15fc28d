#!/bin/sh
# The demo `make run` shows with no CMD: the machine as perfkernel sees it.
echo "perfkernel demo: $(uname -srm)"
echo "--- / ---"
ls /
echo "--- /bin (first entries) ---"
ls /bin | head -n 8
