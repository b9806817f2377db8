// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl config: the namespace settings (KPX_CMD_SET_CONFIG, --show:
 * KPX_CMD_GET_CONFIG).
 */
#include <net/if.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/cidr.h"
#include "base/service.h"
#include "cli/kpxctl.h"
#include "dp/kpx/nl.h"

/* ---- config ---- */

/* "kpxctl config --show": KPX_CMD_GET_CONFIG as one JSON object. */
static int show_config(void)
{
	struct kpx_ns_config c;
	struct json_object *o;
	struct kpx_nl *nl;
	int err;

	if (open_nl(&nl))
		return 1;
	err = kpx_nl_get_config(nl, &c);
	if (close_nl(nl, "config", err))
		return 1;
	o = json_object_new_object();
	json_object_object_add(o, "local_cidrs",
			       cidrs_json(c.local_cidrs, c.nlocal_cidrs));
	json_object_object_add(o, "local_ifname",
			       json_object_new_string(c.local_ifname));
	json_object_object_add(o, "local_ifprefix",
			       json_object_new_string(c.local_ifprefix));
	print_json(o);
	json_object_put(o);
	return 0;
}

int cmd_config(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_ns_config c;
	struct kpx_nl *nl;

	if (argc == 2 && !strcmp(argv[1], "--show"))
		return show_config();
	memset(&c, 0, sizeof(c));
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return usage_error(cmd, "'%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "--local-cidr")) {
			if (c.nlocal_cidrs >= KPX_CONFIG_CIDRS_MAX)
				return usage_error(cmd, "too many CIDRs");
			if (kpx_cidr_parse(v, &c.local_cidrs[c.nlocal_cidrs]))
				return usage_error(cmd, "bad CIDR '%s'", v);
			c.nlocal_cidrs++;
		} else if (!strcmp(argv[i], "--local-ifname") ||
			   !strcmp(argv[i], "--local-ifprefix")) {
			char *dst = !strcmp(argv[i], "--local-ifname") ?
					    c.local_ifname :
					    c.local_ifprefix;

			if (strlen(v) >= IF_NAMESIZE)
				return usage_error(cmd, "name '%s' too long",
						   v);
			snprintf(dst, IF_NAMESIZE, "%s", v);
		} else {
			return usage_error(cmd, "unknown option '%s'", argv[i]);
		}
		i++;
	}
	if (open_nl(&nl))
		return 1;
	return close_nl(nl, "config", kpx_nl_set_config(nl, &c));
}
