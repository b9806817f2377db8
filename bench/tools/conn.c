// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_load conn: new-connection load.  CONC non-blocking connects in flight,
 * each to a random target; the latency of one is from connect() to the
 * handshake's completion (EPOLLOUT, SO_ERROR 0), i.e. SYN out, SYN-ACK back
 * through the whole path.  Then the socket is closed with SO_LINGER 0 (a
 * reset: no TIME_WAIT, so the client's ports never run out).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load.h"

struct slot {
	int fd;
	uint64_t t0;
};

struct conn_run {
	const struct load_opts *o;
	int ep;
	struct slot *slots;
	uint64_t rng;
	uint64_t *lat;		/* ns, one per completed connection */
	size_t nlat, cap;
	unsigned long errors, timeouts;
	int last_errno;
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void slot_close(struct slot *s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s->fd);
	s->fd = -1;
}

static int slot_start(struct conn_run *r, int i)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = i };
	struct slot *s = &r->slots[i];
	struct sockaddr_in sin;

	load_targets_pick(&r->o->targets, rng_next(&r->rng) % r->o->targets.total, &sin);
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -1;
	s->t0 = load_now_ns();
	if (connect(s->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
	    errno != EINPROGRESS) {
		r->errors++;
		r->last_errno = errno;
		slot_close(s);
		return 0;
	}
	epoll_ctl(r->ep, EPOLL_CTL_ADD, s->fd, &ev);
	return 0;
}

static void record(struct conn_run *r, uint64_t ns)
{
	if (r->nlat == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 65536;
		r->lat = realloc(r->lat, r->cap * sizeof(*r->lat));
		if (!r->lat) {
			perror("kpx_load");
			exit(1);
		}
	}
	r->lat[r->nlat++] = ns;
}

static void slot_done(struct conn_run *r, struct slot *s, uint64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		r->errors++;
		r->last_errno = err;
	} else {
		record(r, now - s->t0);
	}
	slot_close(s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(const struct conn_run *r, double p)
{
	size_t k;

	if (!r->nlat)
		return 0;
	k = (size_t)(p * (r->nlat - 1) + 0.5);
	return r->lat[k] / 1e3;
}

static void report(struct conn_run *r, double secs)
{
	double sum = 0;
	size_t i;

	qsort(r->lat, r->nlat, sizeof(*r->lat), cmp_u64);
	for (i = 0; i < r->nlat; i++)
		sum += r->lat[i];
	printf("{\"mode\":\"conn\",\"targets\":%llu,\"conc\":%d,\"secs\":%.3f,"
	       "\"conns\":%zu,\"errors\":%lu,\"timeouts\":%lu,\"last_error\":\"%s\","
	       "\"cps\":%.1f,\"mean_us\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
	       "\"p99_us\":%.1f,\"max_us\":%.1f}\n",
	       (unsigned long long)r->o->targets.total, r->o->conc, secs, r->nlat,
	       r->errors, r->timeouts, r->last_errno ? strerror(r->last_errno) : "",
	       r->nlat / secs, r->nlat ? sum / r->nlat / 1e3 : 0.0, pct_us(r, 0.5),
	       pct_us(r, 0.9), pct_us(r, 0.99), pct_us(r, 1.0));
}

/* expire() - reset connects older than the timeout; restart their slots. */
static void expire(struct conn_run *r, uint64_t now)
{
	uint64_t tmo = (uint64_t)r->o->timeout_ms * 1000000ULL;
	int i;

	for (i = 0; i < r->o->conc; i++) {
		if (r->slots[i].fd >= 0 && now - r->slots[i].t0 > tmo) {
			r->timeouts++;
			slot_close(&r->slots[i]);
		}
	}
}

int load_conn(const struct load_opts *o)
{
	struct conn_run r = { .o = o, .rng = o->seed * 2654435761UL + 1 };
	struct epoll_event evs[64];
	uint64_t t0, now, end;
	int i, n;

	r.ep = epoll_create1(EPOLL_CLOEXEC);
	r.slots = calloc(o->conc, sizeof(*r.slots));
	if (r.ep < 0 || !r.slots)
		return 1;
	t0 = load_now_ns();
	end = t0 + (uint64_t)(o->secs * 1e9);
	for (i = 0; i < o->conc; i++)
		if (slot_start(&r, i) < 0) {
			perror("kpx_load: socket");
			return 1;
		}
	for (now = t0; now < end; ) {
		n = epoll_wait(r.ep, evs, 64, 10);
		now = load_now_ns();
		for (i = 0; i < n; i++)
			slot_done(&r, &r.slots[evs[i].data.u32], now);
		expire(&r, now);
		for (i = 0; i < o->conc && now < end; i++)
			if (r.slots[i].fd < 0 && slot_start(&r, i) < 0) {
				perror("kpx_load: socket");
				return 1;
			}
	}
	for (i = 0; i < o->conc; i++)
		if (r.slots[i].fd >= 0)
			slot_close(&r.slots[i]);
	report(&r, (now - t0) / 1e9);
	return r.nlat ? 0 : 1;
}
