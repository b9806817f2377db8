// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: a kubeconfig through kpx_kubeconfig_load() (libyaml,
 * contexts, base64 *-data fields), from a memfd.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct kpx_kubeconfig kc;
	char path[64], err[256];

	if (fd < 0)
		fd = memfd_create("kubeconfig", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!kpx_kubeconfig_load(path, &kc, err, sizeof(err)))
		kpx_kubeconfig_free(&kc);
	return 0;
}
