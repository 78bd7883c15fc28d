/* libc-compat: just enough <string.h> for Debian's libfdt headers in the freestanding kernel. */
#pragma once
#include <kern/string.h>
