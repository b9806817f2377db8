// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl stats: the module's counters (KPX_CMD_GET_STATS).
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
	struct kpx_nl_stats st;
	struct kpx_nl *nl;
	int json, err;

	json = parse_json_flag(cmd, argc, argv);
	if (json < 0)
		return EXIT_USAGE;
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_stats(nl, &st);
	if (err) {
		runtime_error(nl, "stats", err);
		kpx_nl_close(nl);
		return 1;
	}
	kpx_nl_close(nl);
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "services",
				       json_object_new_uint64(st.services));
		json_object_object_add(o, "backends",
				       json_object_new_uint64(st.backends));
		json_object_object_add(o, "conns",
				       json_object_new_uint64(st.conns));
		json_object_object_add(o, "rejects",
				       json_object_new_uint64(st.rejects));
		json_object_object_add(o, "drops",
				       json_object_new_uint64(st.drops));
		json_object_object_add(o, "filtered",
				       json_object_new_uint64(st.filtered));
		json_object_object_add(
			o, "invalid_drops",
			json_object_new_uint64(st.invalid_drops));
		json_object_object_add(o, "generation",
				       json_object_new_uint64(st.generation));
		print_json(o);
		json_object_put(o);
	} else {
		printf("services: %u\nbackends: %u\nconns: %llu\n"
		       "rejects: %llu\ndrops: %llu\nfiltered: %llu\n"
		       "invalid_drops: %llu\ngeneration: %u\n",
		       st.services, st.backends, (unsigned long long)st.conns,
		       (unsigned long long)st.rejects,
		       (unsigned long long)st.drops,
		       (unsigned long long)st.filtered,
		       (unsigned long long)st.invalid_drops, st.generation);
	}
	return 0;
}
