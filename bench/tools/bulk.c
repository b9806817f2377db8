// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_load bulk: one established connection, 256 KiB writes for the run
 * time; the rate is payload bytes accepted by the socket per second.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load.h"

#define TXBUF (256 * 1024)

int load_bulk(const struct load_opts *o)
{
	struct sockaddr_in sin;
	uint64_t t0, t1, end, bytes = 0;
	char *buf = calloc(1, TXBUF), line[128];
	ssize_t n;
	int fd;

	load_targets_pick(&o->targets, 0, &sin);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!buf || fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		fprintf(stderr, "kpx_load bulk: connect: %s\n", strerror(errno));
		return 1;
	}
	n = read(fd, line, sizeof(line) - 1);	/* the backend's "ID\n" */
	line[n > 0 ? n - 1 : 0] = '\0';
	t0 = load_now_ns();
	end = t0 + (uint64_t)(o->secs * 1e9);
	do {
		n = write(fd, buf, TXBUF);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "kpx_load bulk: write: %s\n", strerror(errno));
			return 1;
		}
		if (n > 0)
			bytes += n;
		t1 = load_now_ns();
	} while (t1 < end);
	close(fd);
	printf("{\"mode\":\"bulk\",\"backend\":\"%s\",\"bytes\":%llu,\"secs\":%.3f,"
	       "\"mbit_s\":%.1f}\n", line, (unsigned long long)bytes,
	       (t1 - t0) / 1e9, bytes * 8.0 / ((t1 - t0) / 1e3));
	return 0;
}
