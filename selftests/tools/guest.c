// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "guest.h"

void kpx_require_guest(const char *prog)
{
	if (access(KPX_GUEST_MARKER, F_OK) == 0)
		return;
	fprintf(stderr,
		"%s: refusing to run: %s is missing, this is not the kpx test VM\n",
		prog, KPX_GUEST_MARKER);
	exit(KPX_EXIT_NOT_GUEST);
}
