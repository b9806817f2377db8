// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl stats: the module's counters (KPX_CMD_GET_STATS), in the order
 * and with the names of kpx_nl_stats_counters[] (nl.h).
 */
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

int cmd_stats(const struct cmd *cmd, int argc, char **argv)
{
	const struct kpx_nl_counter *c;
	struct kpx_nl_stats st;
	struct kpx_nl *nl;
	int json, err;

	json = parse_json_flag(cmd, argc, argv);
	if (json < 0)
		return EXIT_USAGE;
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_stats(nl, &st);
	if (close_nl(nl, "stats", err))
		return 1;
	if (json) {
		struct json_object *o = json_object_new_object();

		for (c = kpx_nl_stats_counters; c->name; c++) {
			uint64_t v = kpx_nl_counter_get(c, &st);

			json_object_object_add(o, c->name,
					       json_object_new_uint64(v));
		}
		print_json(o);
		json_object_put(o);
	} else {
		for (c = kpx_nl_stats_counters; c->name; c++)
			printf("%s: %llu\n", c->name,
			       (unsigned long long)kpx_nl_counter_get(c, &st));
	}
	return 0;
}
