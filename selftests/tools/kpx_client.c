// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_client: the client of the selftests.  Connects to ADDR:PORT over TCP
 * or UDP with a new socket each time and reads the one-line answer of
 * kpx_echo.  Per attempt it prints
 *
 *     N ok MS ANSWER                   e.g. "3 ok 0.52 pod1 10.244.1.2:8080 peer=10.0.1.2:40112"
 *     N ERRNO MS STAGE                 e.g. "4 ECONNREFUSED 0.31 connect"
 *
 * (MS = milliseconds the attempt took; STAGE = connect, send or recv; a
 * timeout is ETIMEDOUT), then a summary:
 *
 *     summary attempts=N ok=N failed=N max_ms=F
 *     ident ID COUNT                   one line per distinct answering ID
 *     error ERRNO COUNT                one line per distinct failure
 *
 * Each UDP attempt uses a source port no earlier attempt of this run used, so
 * that it is a new conntrack entry (the kernel picks ephemeral ports at
 * random, and a reused port within the UDP timeout would join the old flow
 * and its backend without a new scheduling decision).
 *
 * With --json each attempt is one JSON object on a line instead, then the
 * summary as one more:
 *
 *     {"attempt": N, "verdict": "answered", "latency_ms": F, "ident": ID,
 *      "backend": "ADDR:PORT", "source": "ADDR:PORT"}
 *     {"attempt": N, "verdict": "refused"|"timeout"|"failed", "latency_ms": F,
 *      "errno": "ECONNREFUSED", "stage": "connect"}
 *     {"summary": {"attempts": N, "ok": N, "failed": N, "max_ms": F,
 *                  "idents": {ID: COUNT, ...}, "errors": {ERRNO: COUNT, ...}}}
 *
 * ("backend" is the address the answer was accepted on, "source" the peer
 * the echo server saw, both from kpx_echo's answer.)
 *
 * --hold keeps one TCP connection open instead and exchanges a line with the
 * echo server every --every ms; with -u, one UDP socket (one source port, one
 * flow) sends a datagram every --every ms, each answered by the echo server
 * that answered the first (another ident is a failed exchange: the flow was
 * moved).  SIGTERM or SIGINT ends the hold early, summary printed:
 *
 *     hold connected ANSWER            once connected (then flushed)
 *     hold summary ident=ID exchanges=N failed=N
 *
 * --sctp speaks SCTP instead of TCP, the same way: a new association per
 * attempt (an ABORT in answer to the INIT is ECONNREFUSED).
 *
 * Exit status: 0 if every attempt/exchange succeeded, 1 otherwise, 2 usage,
 * 4 outside the test VM.
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "guest.h"
#include "sockaddr.h"

#define MAX_KEYS 64

struct counter {
	char key[72];
	unsigned int count;
};

struct opts {
	struct sockaddr_storage dst;
	socklen_t dstlen;
	bool udp, sctp, quiet, json;
	long count, timeout_ms, interval_ms, duration_ms, hold_ms, every_ms;
};

static struct counter idents[MAX_KEYS], errors[MAX_KEYS];

/* Set by SIGTERM/SIGINT during --hold: end it, summary printed. */
static volatile sig_atomic_t hold_stop;

/* UDP source ports used so far (host byte order), see the header comment. */
static unsigned char udp_ports_used[65536 / 8];
#define UDP_PORT_TRIES 64

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: kpx_client [-u|--sctp] [-n COUNT] [-t TIMEOUT_MS] [-i INTERVAL_MS]\n"
		"                  [-d DURATION_MS] [-q] ADDR:PORT\n"
		"       kpx_client [-u] --hold MS [--every MS] [-t TIMEOUT_MS] ADDR:PORT\n"
		"  -u  UDP (default TCP)         -n  attempts (default 1)\n"
		"  --sctp  SCTP (one-to-one style socket, a new association each time)\n"
		"  -t  per-attempt timeout (default 1000 ms)\n"
		"  -i  pause between attempts (default 0 ms)\n"
		"  -d  keep making attempts for this long (overrides -n)\n"
		"  -q  print only the summary\n"
		"  --json  one JSON object per attempt, then the summary\n"
		"  --hold MS   one TCP connection (-u: UDP flow) kept open MS ms,\n"
		"  --every MS  exchanging a line every MS ms (default 100)\n"
		"              (SIGTERM: ends it early)\n"
		"  ADDR:PORT is A.B.C.D:PORT or [IPV6]:PORT\n");
	exit(status);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void count(struct counter *tab, const char *key)
{
	int i;

	for (i = 0; i < MAX_KEYS && tab[i].count; i++) {
		if (!strcmp(tab[i].key, key)) {
			tab[i].count++;
			return;
		}
	}
	if (i < MAX_KEYS) {
		snprintf(tab[i].key, sizeof(tab[i].key), "%s", key);
		tab[i].count = 1;
	}
}

static const char *errname(int err)
{
	switch (err) {
	case ECONNREFUSED: return "ECONNREFUSED";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNRESET: return "ECONNRESET";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EPIPE: return "EPIPE";
	case EPROTO: return "EPROTO";
	default: return NULL;
	}
}

/* Waits for @events on @fd until @deadline (ms); 0, or an errno. */
static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	for (;;) {
		double left = deadline - now_ms();

		if (left <= 0)
			return ETIMEDOUT;
		n = poll(&p, 1, (int)left + 1);
		if (n > 0)
			return 0;
		if (n == 0)
			return ETIMEDOUT;
		if (errno != EINTR)
			return errno;
	}
}

/*
 * Reads one line (without the newline) into @buf before @deadline.
 * Returns 0 or an errno (EPROTO: closed before a full line).
 */
static int read_line(int fd, char *buf, size_t size, double deadline,
		     bool dgram)
{
	size_t len = 0;
	ssize_t n;
	int err;

	for (;;) {
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			return err;
		n = recv(fd, buf + len, size - 1 - len, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return EPROTO;
		len += (size_t)n;
		buf[len] = '\0';
		if (strchr(buf, '\n') || dgram || len == size - 1)
			break;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The local port of a connected socket (host byte order), 0 if unknown. */
static unsigned int local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/*
 * Connects a new non-blocking socket to the destination; returns the fd or
 * -errno, with *@stage naming the step that failed.
 */
static int connect_once(const struct opts *o, double deadline,
			const char **stage)
{
	int fd, err;
	socklen_t elen = sizeof(err);

	*stage = "socket";
	fd = socket(o->dst.ss_family,
		    (o->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, o->sctp ? IPPROTO_SCTP : 0);
	if (fd < 0)
		return -errno;
	*stage = "connect";
	if (connect(fd, (const struct sockaddr *)&o->dst, o->dstlen) == 0)
		return fd;
	err = errno;
	if (err == EINPROGRESS) {
		err = wait_fd(fd, POLLOUT, deadline);
		if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			err = errno;
	}
	if (!err)
		return fd;
	close(fd);
	return -err;
}

/*
 * connect_once(); for UDP, a socket whose source port this run has not used
 * yet (after UDP_PORT_TRIES reused ports it takes the last one).
 */
static int open_conn(const struct opts *o, double deadline,
		     const char **stage)
{
	unsigned int port = 0, try;
	int fd = -1;

	for (try = 0; try < UDP_PORT_TRIES; try++) {
		if (fd >= 0)
			close(fd);
		fd = connect_once(o, deadline, stage);
		if (fd < 0 || !o->udp)
			return fd;
		port = local_port(fd);
		if (!(udp_ports_used[port / 8] & (1u << (port % 8))))
			break;
	}
	udp_ports_used[port / 8] |= 1u << (port % 8);
	return fd;
}

/* One attempt: connect (TCP) or send (UDP), read the answer line. */
static int attempt(const struct opts *o, char *answer, size_t size,
		   const char **stage)
{
	double deadline = now_ms() + (double)o->timeout_ms;
	int fd, err = 0;

	fd = open_conn(o, deadline, stage);
	if (fd < 0)
		return -fd;
	if (o->udp) {
		*stage = "send";
		if (send(fd, "kpx\n", 4, 0) < 0)
			err = errno;
	}
	if (!err) {
		*stage = "recv";
		err = read_line(fd, answer, size, deadline, o->udp);
	}
	close(fd);
	return err;
}

/* print_json: one object on a line, then freed. */
static void print_json(struct json_object *j)
{
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
}

/* One attempt as JSON: the answer "ID ADDR:PORT peer=ADDR:PORT" split. */
static void json_attempt(long n, double ms, const char *answer,
			 const char *err, const char *stage)
{
	struct json_object *j = json_object_new_object();
	char ident[72] = "", backend[72] = "", source[72] = "";

	json_object_object_add(j, "attempt", json_object_new_int64(n));
	if (answer) {
		sscanf(answer, "%71s %71s peer=%71s", ident, backend, source);
		json_object_object_add(j, "verdict", json_object_new_string("answered"));
	} else {
		json_object_object_add(j, "verdict", json_object_new_string(
			!strcmp(err, "ECONNREFUSED") ? "refused" :
			!strcmp(err, "ETIMEDOUT") ? "timeout" : "failed"));
	}
	json_object_object_add(j, "latency_ms", json_object_new_double(ms));
	if (answer) {
		json_object_object_add(j, "ident", json_object_new_string(ident));
		json_object_object_add(j, "backend", json_object_new_string(backend));
		json_object_object_add(j, "source", json_object_new_string(source));
	} else {
		json_object_object_add(j, "errno", json_object_new_string(err));
		json_object_object_add(j, "stage", json_object_new_string(stage));
	}
	print_json(j);
}

static struct json_object *json_counts(const struct counter *tab)
{
	struct json_object *j = json_object_new_object();
	int i;

	for (i = 0; i < MAX_KEYS && tab[i].count; i++)
		json_object_object_add(j, tab[i].key, json_object_new_int64(tab[i].count));
	return j;
}

static void json_summary(long n, long ok, long failed, double max_ms)
{
	struct json_object *j = json_object_new_object(), *s = json_object_new_object();

	json_object_object_add(s, "attempts", json_object_new_int64(n));
	json_object_object_add(s, "ok", json_object_new_int64(ok));
	json_object_object_add(s, "failed", json_object_new_int64(failed));
	json_object_object_add(s, "max_ms", json_object_new_double(max_ms));
	json_object_object_add(s, "idents", json_counts(idents));
	json_object_object_add(s, "errors", json_counts(errors));
	json_object_object_add(j, "summary", s);
	print_json(j);
}

static int run_attempts(const struct opts *o)
{
	double start = now_ms(), max_ms = 0;
	long n, ok = 0, failed = 0;
	char answer[256], word[72];
	int i;

	for (n = 0; o->duration_ms ? now_ms() - start < (double)o->duration_ms
				   : n < o->count; n++) {
		const char *stage = "";
		double t0 = now_ms(), ms;
		int err = attempt(o, answer, sizeof(answer), &stage);

		ms = now_ms() - t0;
		if (ms > max_ms)
			max_ms = ms;
		if (!err) {
			ok++;
			sscanf(answer, "%71s", word);
			count(idents, word);
			if (o->json)
				json_attempt(n + 1, ms, answer, NULL, NULL);
			else if (!o->quiet)
				printf("%ld ok %.2f %s\n", n + 1, ms, answer);
		} else {
			const char *name = errname(err);

			failed++;
			if (!name) {
				snprintf(word, sizeof(word), "errno%d", err);
				name = word;
			}
			count(errors, name);
			if (o->json)
				json_attempt(n + 1, ms, NULL, name, stage);
			else if (!o->quiet)
				printf("%ld %s %.2f %s\n", n + 1, name, ms, stage);
		}
		fflush(stdout);
		if (o->interval_ms)
			usleep((useconds_t)o->interval_ms * 1000);
	}
	if (o->json) {
		json_summary(n, ok, failed, max_ms);
		return failed ? 1 : 0;
	}
	printf("summary attempts=%ld ok=%ld failed=%ld max_ms=%.2f\n",
	       n, ok, failed, max_ms);
	for (i = 0; i < MAX_KEYS && idents[i].count; i++)
		printf("ident %s %u\n", idents[i].key, idents[i].count);
	for (i = 0; i < MAX_KEYS && errors[i].count; i++)
		printf("error %s %u\n", errors[i].key, errors[i].count);
	return failed ? 1 : 0;
}

static void on_hold_stop(int sig)
{
	(void)sig;
	hold_stop = 1;
}

/*
 * One --hold exchange on @fd: TCP, @msg echoed back; UDP, @msg answered by
 * the echo server whose ident is @ident.  0 or an errno.
 */
static int hold_exchange(const struct opts *o, int fd, const char *msg,
			 int len, const char *ident)
{
	char back[256], word[72] = "", line[72];
	int err = 0;

	/* one datagram for UDP (the echo server answers each one) */
	if (o->udp) {
		len = snprintf(line, sizeof(line), "%s\n", msg);
		if (send(fd, line, (size_t)len, 0) != len)
			err = errno;
	} else if (send(fd, msg, (size_t)len, MSG_NOSIGNAL) != len ||
		   send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		err = errno;
	}
	if (!err)
		err = read_line(fd, back, sizeof(back),
				now_ms() + (double)o->timeout_ms, o->udp);
	if (err)
		return err;
	if (o->udp) {
		if (sscanf(back, "%71s", word) != 1)
			return EPROTO;
		return strcmp(word, ident) ? EPROTO : 0;
	}
	return strcmp(back, msg) ? EPROTO : 0;
}

static int run_hold(const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_hold_stop };
	double start = now_ms();
	char answer[256], msg[64], ident[72] = "";
	const char *stage;
	long exchanges = 0, failed = 0, seq;
	int fd, err = 0;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fd = open_conn(o, start + (double)o->timeout_ms, &stage);
	if (fd < 0)
		err = -fd;
	else if (o->udp && send(fd, "kpx\n", 4, 0) < 0)
		err = errno;
	if (!err)
		err = read_line(fd, answer, sizeof(answer),
				start + (double)o->timeout_ms, o->udp);
	if (err) {
		printf("hold failed %s %s\n",
		       errname(err) ? errname(err) : strerror(err), stage);
		printf("hold summary ident= exchanges=0 failed=1\n");
		return 1;
	}
	sscanf(answer, "%71s", ident);
	printf("hold connected %s\n", answer);
	fflush(stdout);
	for (seq = 1; !hold_stop && now_ms() - start < (double)o->hold_ms;
	     seq++) {
		int len = snprintf(msg, sizeof(msg), "seq %ld", seq);

		usleep((useconds_t)o->every_ms * 1000);
		if (hold_stop)
			break;
		exchanges++;
		err = hold_exchange(o, fd, msg, len, ident);
		if (err) {
			failed++;
			printf("hold exchange %ld failed: %s\n", seq,
			       errname(err) ? errname(err) : strerror(err));
			fflush(stdout);
			if (err != ETIMEDOUT)
				break;
		}
	}
	close(fd);
	printf("hold summary ident=%s exchanges=%ld failed=%ld\n",
	       ident, exchanges, failed);
	return failed || !exchanges ? 1 : 0;
}

static long num_arg(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end || v < min) {
		fprintf(stderr, "kpx_client: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "udp", no_argument, NULL, 'u' },
		{ "sctp", no_argument, NULL, 'S' },
		{ "hold", required_argument, NULL, 'H' },
		{ "every", required_argument, NULL, 'E' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct opts o = { .count = 1, .timeout_ms = 1000, .every_ms = 100 };
	int opt;

	while ((opt = getopt_long(argc, argv, "un:t:i:d:qh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'u': o.udp = true; break;
		case 'S': o.sctp = true; break;
		case 'n': o.count = num_arg(optarg, 1); break;
		case 't': o.timeout_ms = num_arg(optarg, 1); break;
		case 'i': o.interval_ms = num_arg(optarg, 0); break;
		case 'd': o.duration_ms = num_arg(optarg, 1); break;
		case 'q': o.quiet = true; break;
		case 'H': o.hold_ms = num_arg(optarg, 1); break;
		case 'E': o.every_ms = num_arg(optarg, 1); break;
		case 'J': o.json = true; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (argc - optind != 1 || (o.hold_ms && o.json) || (o.udp && o.sctp))
		usage(stderr, 2);
	kpx_require_guest("kpx_client");
	o.dstlen = kpx_parse_addrport(argv[optind], &o.dst, false);
	if (!o.dstlen) {
		fprintf(stderr, "kpx_client: bad address '%s'\n", argv[optind]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return o.hold_ms ? run_hold(&o) : run_attempts(&o);
}
