// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_load: the load tool of the VM benchmarks (bench/vm/guest.sh).
 *
 *   kpx_load serve [-i ID] [-p PORT]
 *	backend: accepts TCP on 0.0.0.0:PORT (default 8080), writes "ID\n"
 *	to each connection, then reads and discards until the peer closes.
 *	Prints its PID once listening and goes to the background.
 *   kpx_load conn [-c CONC] [-d SECONDS] [-t TIMEOUT_MS] [-s SEED] TARGET...
 *	new-connection load: CONC connections in flight (default 1), each to
 *	a TARGET picked at random; a connection is done when the handshake
 *	completes (SYN, SYN-ACK), then it is reset (SO_LINGER 0, so neither
 *	side keeps TIME_WAIT).  Prints connect latency percentiles (µs) and
 *	connections per second as JSON.
 *   kpx_load bulk [-d SECONDS] TARGET
 *	established-flow load: one connection, writes 256 KiB blocks for
 *	SECONDS; prints bytes and Mbit/s (payload, sender side) as JSON.
 *
 * TARGET is A.B.C.D:PORT or A.B.C.D:PORT+N, the N consecutive IPv4
 * addresses from A.B.C.D (all on PORT).  IPv4 only.
 *
 * Like the selftest tools it refuses to run outside the kpx test VM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "load.h"

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: kpx_load serve [-i ID] [-p PORT]\n"
		"       kpx_load conn [-c CONC] [-d SECONDS] [-t TIMEOUT_MS] [-s SEED] TARGET...\n"
		"       kpx_load bulk [-d SECONDS] TARGET\n"
		"  TARGET: A.B.C.D:PORT or A.B.C.D:PORT+N (N consecutive addresses)\n"
		"  output: one JSON object on stdout\n");
	exit(status);
}

int main(int argc, char **argv)
{
	struct load_opts o = {
		.conc = 1, .secs = 5.0, .timeout_ms = 1000, .port = 8080,
		.ident = "pod", .seed = 1,
	};
	const char *mode;
	int c;

	if (argc < 2)
		usage(stderr, 2);
	mode = argv[1];
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help"))
		usage(stdout, 0);
	kpx_require_guest("kpx_load");
	signal(SIGPIPE, SIG_IGN);
	optind = 2;
	while ((c = getopt(argc, argv, "c:d:t:s:i:p:h")) != -1) {
		switch (c) {
		case 'c': o.conc = atoi(optarg); break;
		case 'd': o.secs = atof(optarg); break;
		case 't': o.timeout_ms = atoi(optarg); break;
		case 's': o.seed = strtoul(optarg, NULL, 0); break;
		case 'i': o.ident = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (o.conc < 1 || o.conc > 1024 || o.secs <= 0 || o.timeout_ms < 1 ||
	    o.port < 1 || o.port > 65535)
		usage(stderr, 2);
	if (!strcmp(mode, "serve"))
		return load_serve(&o);
	if (load_targets_parse(&o.targets, argc - optind, argv + optind) < 0)
		usage(stderr, 2);
	if (!strcmp(mode, "conn"))
		return load_conn(&o);
	if (!strcmp(mode, "bulk"))
		return load_bulk(&o);
	usage(stderr, 2);
	return 2;
}
