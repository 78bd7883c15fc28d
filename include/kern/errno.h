/* errno.h - Linux errno values (from the uapi headers): kernel functions return 0 or -Exxx. */
#pragma once

#include <linux/errno.h>
