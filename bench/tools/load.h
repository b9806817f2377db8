/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx_load: shared types of the benchmark load tool (see kpx_load.c). */
#ifndef KPX_BENCH_LOAD_H
#define KPX_BENCH_LOAD_H

#include <stdint.h>

/* One A.B.C.D:PORT+N range: host-order first address, count, port. */
struct load_range {
	uint32_t first;
	uint32_t count;
	uint16_t port;
};

/* The targets of a run: ranges and their total address count. */
struct load_targets {
	struct load_range *r;
	int nr;
	uint64_t total;
};

struct load_opts {
	int conc;		/* connections in flight (conn) */
	double secs;		/* run time, seconds */
	int timeout_ms;		/* per-connection connect timeout */
	int port;		/* listening port (serve) */
	const char *ident;	/* answer line (serve) */
	unsigned long seed;	/* target choice PRNG seed */
	struct load_targets targets;
};

/*
 * load_targets_parse() - parse @argc "A.B.C.D:PORT[+N]" words into @t.
 * Returns 0, or -1 (message on stderr) if a word is malformed or none given.
 */
int load_targets_parse(struct load_targets *t, int argc, char **argv);

/*
 * load_targets_pick() - the @k-th address of @t (0 <= k < t->total) as a
 * sockaddr_in in network byte order.
 */
void load_targets_pick(const struct load_targets *t, uint64_t k, void *sin);

/* load_now_ns() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t load_now_ns(void);

/* Modes; each prints one JSON object and returns the exit status. */
int load_serve(const struct load_opts *o);
int load_conn(const struct load_opts *o);
int load_bulk(const struct load_opts *o);

#endif
