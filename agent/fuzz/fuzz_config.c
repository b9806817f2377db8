// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness: a KubeProxyConfiguration document through
 * kpx_config_load_yaml() (libyaml document walk, value parsers).
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "base/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct kpx_config c;
	char err[256];

	if (!quiet++)
		kpx_log_set_fd(open("/dev/null", O_WRONLY));
	kpx_config_defaults(&c);
	kpx_config_load_yaml(&c, (const char *)data, size, err, sizeof(err));
	kpx_config_free(&c);
	return 0;
}
