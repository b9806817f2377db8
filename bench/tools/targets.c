// SPDX-License-Identifier: GPL-2.0-only
/* kpx_load: target address ranges and the clock. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load.h"

static int parse_one(const char *w, struct load_range *r)
{
	char buf[64], *colon, *plus, *end;
	struct in_addr a;
	unsigned long port, n = 1;

	if (strlen(w) >= sizeof(buf))
		return -1;
	strcpy(buf, w);
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	plus = strchr(colon + 1, '+');
	if (plus) {
		*plus = '\0';
		n = strtoul(plus + 1, &end, 10);
		if (*end || n < 1 || n > (1UL << 24))
			return -1;
	}
	port = strtoul(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -1;
	r->first = ntohl(a.s_addr);
	r->count = n;
	r->port = port;
	return 0;
}

int load_targets_parse(struct load_targets *t, int argc, char **argv)
{
	int i;

	if (argc < 1) {
		fprintf(stderr, "kpx_load: no TARGET\n");
		return -1;
	}
	t->r = calloc(argc, sizeof(*t->r));
	if (!t->r)
		return -1;
	t->nr = argc;
	t->total = 0;
	for (i = 0; i < argc; i++) {
		if (parse_one(argv[i], &t->r[i]) < 0) {
			fprintf(stderr, "kpx_load: bad TARGET '%s'\n", argv[i]);
			return -1;
		}
		t->total += t->r[i].count;
	}
	return 0;
}

void load_targets_pick(const struct load_targets *t, uint64_t k, void *out)
{
	struct sockaddr_in *sin = out;
	int i;

	for (i = 0; i < t->nr - 1 && k >= t->r[i].count; i++)
		k -= t->r[i].count;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(t->r[i].port);
	sin->sin_addr.s_addr = htonl(t->r[i].first + (uint32_t)k);
}

uint64_t load_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
