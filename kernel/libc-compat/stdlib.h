/* libc-compat: libfdt_env.h includes <stdlib.h>; the kernel needs nothing from it. */
#pragma once
#include <stddef.h>
