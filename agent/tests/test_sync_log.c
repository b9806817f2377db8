// SPDX-License-Identifier: GPL-2.0-only
/*
 * sync.c's "set" log lines (log_op): a frontend with 400 IPv6 backends, as
 * case 18 has, is logged over several lines, each under log.c's 4 KiB
 * line limit, "set KEY flags=... backends=[...]" then "set+ KEY
 * backends=[...]", and together they list every backend once, in order
 * (selftests/mode_lib.sh reads them back in the proxy modes).  TAP.
 */
#include <unistd.h>

#include "base/log.h"
#include "sync/sync.h"
#include "testlib_model.h"

#define NBE 400

/* The Service and its slice, with NBE endpoints fd00:244::1 .. */
static void add_objects(struct kpx_model *m)
{
	static char eps[NBE * 96];
	size_t len = 0;
	int i;

	for (i = 1; i <= NBE; i++)
		len += snprintf(eps + len, sizeof(eps) - len,
				"%s{'addresses':['fd00:244::%x'],'conditions':{'ready':true}}",
				i > 1 ? "," : "", i);
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'big','namespace':'default','resourceVersion':'1'},"
		   "'spec':{'type':'ClusterIP','clusterIPs':['fd00:96::18'],"
		   "'ipFamilies':['IPv6'],'ports':[{'port':80,'targetPort':8080}]}}")) == 0,
	   "Service default/big accepted");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'big-1','namespace':'default','labels':"
		   "{'kubernetes.io/service-name':'big'}},'addressType':'IPv6',"
		   "'ports':[{'port':8080}],'endpoints':[%s]}", eps)) == 0,
	   "its slice with %d endpoints accepted", NBE);
}

/* Checks the captured log @s: line lengths, prefixes, the backend order. */
static void check_lines(char *s)
{
	const char *key = "[fd00:96::18]:80/tcp";
	char want[64], *line, *save, *p;
	int lines = 0, first = 0, cont = 0, next = 1, maxlen = 0, bad = 0;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char head[96];

		if ((int)strlen(line) > maxlen)
			maxlen = strlen(line);
		snprintf(head, sizeof(head), "] \"dry run: set %s flags=", key);
		if (strstr(line, head)) {
			first++;
		} else {
			snprintf(head, sizeof(head), "] \"dry run: set+ %s backends=[", key);
			if (!strstr(line, head))
				continue;
			cont++;
			if (!first)
				bad++;	/* a continuation before the first line */
		}
		lines++;
		p = strstr(line, "backends=[") + 10;
		while (*p && *p != ']') {
			snprintf(want, sizeof(want), "[fd00:244::%x]:8080@1", next);
			if (strncmp(p, want, strlen(want))) {
				bad++;
				break;
			}
			next++;
			p += strlen(want);
			if (*p == ' ')
				p++;
		}
	}
	ok(first == 1, "one \"set\" line for the frontend (%d)", first);
	ok(cont >= 2, "its backends continue on \"set+\" lines (%d)", cont);
	ok(maxlen < 4000, "every line is below log.c's 4 KiB limit (longest %d)", maxlen);
	ok(next - 1 == NBE && !bad, "the lines list backends 1..%d once, in order (%d, %d bad)",
	   NBE, next - 1, bad);
	ok(lines == first + cont, "%d lines", lines);
}

int main(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_sync *s = m ? kpx_sync_new(m, NULL, 1000, 30000) : NULL;
	static char buf[1 << 17];
	FILE *f = tmpfile();
	size_t n;

	printf("TAP version 13\n");
	if (!s || !f) {
		ok(0, "model, syncer and log file created");
		return tap_done();
	}
	add_objects(m);
	kpx_log_set_fd(fileno(f));
	ok(kpx_sync_run(s) == 0, "dry-run sync has no errors");
	kpx_log_set_fd(2);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	check_lines(buf);
	fclose(f);
	kpx_sync_free(s);
	kpx_model_free(m);
	return tap_done();
}
