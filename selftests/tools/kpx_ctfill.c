// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_ctfill: fill the conntrack table of the current network namespace
 * with made-up UDP flows, or delete them again.
 *
 *     kpx_ctfill [-a] [-D] [-E] [-t SECONDS] N SRC DEST:PORT [BACKEND:PORT]
 *
 * Creates (through ctnetlink, libnetfilter_conntrack) N UDP entries from
 * SRC onwards (IPv4; the i-th entry from address SRC + i / 50000, source
 * port 10000 + i % 50000) to DEST:PORT, DNATed to BACKEND:PORT when given
 * (the reply tuple then comes from BACKEND:PORT, as an entry the proxy's
 * DNAT made would: the cleanup cannot tell them apart), with a timeout of
 * SECONDS (default 600).  -a marks them ASSURED and SEEN_REPLY, as a flow
 * that had replies: the kernel never evicts such an entry early
 * (early_drop() and the gc worker skip assured UDP entries), so a table
 * filled with them stays full.  -E first deletes every entry the kernel
 * could evict to make room (early_drop(), gc_worker_can_early_drop()): those
 * not ASSURED and TCP ones in a state other than ESTABLISHED (TIME_WAIT,
 * CLOSE, ...), so that a table filled afterwards holds only entries that
 * stay, and a new connection finds no room.  -D deletes the N entries the
 * same arguments created instead (those not there are counted as missing).
 *
 * Each request waits for its acknowledgement.  One JSON line on stdout
 * (json-c):
 *
 *     {"made": M, "failed": F, "errno": "ENOMEM", "evicted": E} (create)
 *     {"deleted": M, "missing": F, "errno": "ENOENT"}    (-D)
 *
 * "evicted": the entries -E deleted (0 without -E).
 * "errno": the error of the first failed request ("" when none; ENOMEM:
 * the table is at nf_conntrack_max and nothing could be evicted).  Exit 0
 * when the requests were made (whatever their answers), 1 when ctnetlink
 * could not be opened, 2 on usage errors.  Needs CAP_NET_ADMIN; only in
 * the test VM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"

#define PORTS_PER_ADDR 50000
#define PORT_BASE 10000
/* Most evictable entries -E deletes (the test tables are far smaller). */
#define EVICT_MAX 65536

struct evict {
	struct nf_conntrack *v[EVICT_MAX];
	int n;
};

static int usage(void)
{
	fprintf(stderr,
		"usage: kpx_ctfill [-a] [-D] [-E] [-t SECONDS] N SRC DEST:PORT [BACKEND:PORT]\n");
	return 2;
}

/* "A.B.C.D:PORT" into network byte order; 0 or -1. */
static int parse_addr_port(const char *s, uint32_t *addr, uint16_t *port)
{
	char buf[64], *colon, *end;
	unsigned long p;
	struct in_addr a;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strrchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	p = strtoul(colon + 1, &end, 10);
	if (*end || !p || p > 65535 || inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*addr = a.s_addr;
	*port = htons((uint16_t)p);
	return 0;
}

/* The error name for the JSON line (the few ctnetlink answers). */
static const char *errname(int e)
{
	switch (e) {
	case 0: return "";
	case ENOMEM: return "ENOMEM";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EPERM: return "EPERM";
	case ENOBUFS: return "ENOBUFS";
	case EINVAL: return "EINVAL";
	default: return "other";
	}
}

/* NFCT_Q_DUMP callback: keep a copy of each entry the kernel may evict. */
static int on_entry(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct evict *e = data;
	uint32_t status = nfct_get_attr_u32(ct, ATTR_STATUS);
	bool evictable = !(status & IPS_ASSURED);

	(void)type;
	if (nfct_get_attr_u8(ct, ATTR_L4PROTO) == IPPROTO_TCP &&
	    nfct_get_attr_u8(ct, ATTR_TCP_STATE) != TCP_CONNTRACK_ESTABLISHED)
		evictable = true;
	if (evictable && e->n < EVICT_MAX)
		e->v[e->n++] = nfct_clone(ct);
	return NFCT_CB_CONTINUE;
}

/* -E: deletes the entries the kernel could evict; the number deleted. */
static long evict_all(struct nfct_handle *h)
{
	static struct evict e;
	uint32_t family = AF_INET;
	long deleted = 0;
	int i;

	nfct_callback_register(h, NFCT_T_ALL, on_entry, &e);
	if (nfct_query(h, NFCT_Q_DUMP, &family) < 0)
		perror("kpx_ctfill: dump");
	nfct_callback_unregister(h);
	for (i = 0; i < e.n; i++) {
		if (e.v[i] && nfct_query(h, NFCT_Q_DESTROY, e.v[i]) == 0)
			deleted++;
		nfct_destroy(e.v[i]);
	}
	return deleted;
}

int main(int argc, char **argv)
{
	uint32_t src, dst, be = 0, timeout = 600;
	uint16_t dport, be_port = 0;
	struct nf_conntrack *ct;
	struct nfct_handle *h;
	int assured = 0, del = 0, evict = 0, first_err = 0, c;
	long n, i, done = 0, failed = 0, evicted = 0;
	struct json_object *out;
	struct in_addr a;
	char *end;

	kpx_require_guest("kpx_ctfill");
	while ((c = getopt(argc, argv, "aDEt:")) != -1) {
		switch (c) {
		case 'a':
			assured = 1;
			break;
		case 'D':
			del = 1;
			break;
		case 'E':
			evict = 1;
			break;
		case 't':
			timeout = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || !timeout)
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 3 && argc - optind != 4)
		return usage();
	n = strtol(argv[optind], &end, 10);
	if (*end || n <= 0 || inet_pton(AF_INET, argv[optind + 1], &a) != 1 ||
	    parse_addr_port(argv[optind + 2], &dst, &dport) ||
	    (argc - optind == 4 && parse_addr_port(argv[optind + 3], &be, &be_port)))
		return usage();
	src = ntohl(a.s_addr);

	h = nfct_open(CONNTRACK, 0);
	ct = nfct_new();
	if (!h || !ct) {
		perror("kpx_ctfill: nfct_open");
		return 1;
	}
	if (evict)
		evicted = evict_all(h);
	for (i = 0; i < n; i++) {
		nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, htonl(src + (uint32_t)(i / PORTS_PER_ADDR)));
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, dst);
		nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_UDP);
		nfct_set_attr_u16(ct, ATTR_PORT_SRC,
				  htons((uint16_t)(PORT_BASE + i % PORTS_PER_ADDR)));
		nfct_set_attr_u16(ct, ATTR_PORT_DST, dport);
		if (!del) {
			nfct_setobjopt(ct, NFCT_SOPT_SETUP_REPLY);
			nfct_set_attr_u32(ct, ATTR_TIMEOUT, timeout);
			if (be) {
				nfct_set_attr_u32(ct, ATTR_DNAT_IPV4, be);
				nfct_set_attr_u16(ct, ATTR_DNAT_PORT, be_port);
			}
			if (assured)
				nfct_set_attr_u32(ct, ATTR_STATUS,
						  IPS_ASSURED | IPS_SEEN_REPLY);
		}
		if (nfct_query(h, del ? NFCT_Q_DESTROY : NFCT_Q_CREATE, ct) == 0) {
			done++;
		} else {
			if (!first_err)
				first_err = errno;
			failed++;
		}
	}
	out = json_object_new_object();
	json_object_object_add(out, del ? "deleted" : "made", json_object_new_int64(done));
	json_object_object_add(out, del ? "missing" : "failed", json_object_new_int64(failed));
	json_object_object_add(out, "errno", json_object_new_string(errname(first_err)));
	if (!del)
		json_object_object_add(out, "evicted", json_object_new_int64(evicted));
	puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_SPACED));
	json_object_put(out);
	nfct_destroy(ct);
	nfct_close(h);
	return 0;
}
