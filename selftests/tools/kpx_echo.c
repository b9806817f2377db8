// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_echo: the backend of the selftests.  Listens on TCP and/or UDP on each
 * ADDR:PORT given and answers every TCP connection and every UDP datagram
 * with one line
 *
 *     ID LOCAL peer=PEER
 *
 * where ID is the identity given on the command line, LOCAL the address the
 * connection or datagram arrived on (after DNAT: the backend's own address)
 * and PEER the source address it saw.  After that line a TCP connection
 * echoes every byte it receives until the peer closes it, so long-lived
 * connections can be checked with kpx_client --hold.  -t, -u and -s pick
 * the protocols (default TCP and UDP); an SCTP association (one-to-one style
 * sockets) is served as a TCP connection.
 *
 * With -d it forks into the background once every socket listens and prints
 * the daemon's PID, so "pid=$(kpx_echo -d ...)" returns when it is ready.
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
#include <unistd.h>

#include "guest.h"
#include "sockaddr.h"

#define MAX_FDS 1024

/* An accepted SCTP association is served as a TCP connection (FD_TCP_CONN). */
enum fd_kind { FD_TCP_LISTEN, FD_SCTP_LISTEN, FD_UDP, FD_TCP_CONN };

static struct pollfd pfds[MAX_FDS];
static enum fd_kind kinds[MAX_FDS];
static int nfds;
static const char *ident;
static bool verbose;

static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: kpx_echo [-t] [-u] [-s] [-d] [-v] ID ADDR:PORT...\n"
		"  answer each TCP connection / SCTP association / UDP datagram\n"
		"  with \"ID LOCAL peer=PEER\"; TCP and SCTP then echo what they get\n"
		"  -t  TCP  -u  UDP  -s  SCTP (one-to-one style sockets): the protocols\n"
		"  listened on (default: TCP and UDP)\n"
		"  -d  go to the background when listening, print the PID\n"
		"  -v  log every connection/datagram on stdout\n"
		"  ADDR:PORT is A.B.C.D:PORT or [IPV6]:PORT\n");
	exit(status);
}

static void add_fd(int fd, enum fd_kind kind)
{
	if (nfds == MAX_FDS) {
		fprintf(stderr, "kpx_echo: too many sockets, closing one\n");
		close(fd);
		return;
	}
	pfds[nfds].fd = fd;
	pfds[nfds].events = POLLIN;
	pfds[nfds].revents = 0;
	kinds[nfds] = kind;
	nfds++;
}

static void del_fd(int i)
{
	close(pfds[i].fd);
	nfds--;
	pfds[i] = pfds[nfds];
	kinds[i] = kinds[nfds];
}

static int open_socket(const struct sockaddr_storage *ss, socklen_t len,
		       int type, int proto)
{
	char buf[KPX_ADDRSTRLEN];
	int one = 1;
	int fd;

	fd = socket(ss->ss_family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
	if (fd < 0)
		goto err;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* an address the node gets only later in the test (a case's phase
	 * adds it): bound now, answering once it is there */
	if (ss->ss_family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)ss, len) < 0)
		goto err;
	if (type == SOCK_STREAM && listen(fd, 128) < 0)
		goto err;
	return fd;
err:
	fprintf(stderr, "kpx_echo: %s %s: %s\n",
		proto == IPPROTO_SCTP ? "sctp" : type == SOCK_STREAM ? "tcp" : "udp",
		kpx_format_addrport((const struct sockaddr *)ss, buf),
		strerror(errno));
	exit(1);
}

/* Formats the answer line for a peer seen on a local address. */
static int answer(char *out, size_t size, const struct sockaddr *local,
		  const struct sockaddr *peer)
{
	char l[KPX_ADDRSTRLEN], p[KPX_ADDRSTRLEN];

	return snprintf(out, size, "%s %s peer=%s\n", ident,
			kpx_format_addrport(local, l),
			kpx_format_addrport(peer, p));
}

static void on_accept(int lfd, bool sctp)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	char line[256];
	int fd, n;

	fd = accept4(lfd, (struct sockaddr *)&peer, &plen,
		     SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	getsockname(fd, (struct sockaddr *)&local, &llen);
	n = answer(line, sizeof(line), (struct sockaddr *)&local,
		   (struct sockaddr *)&peer);
	if (verbose)
		printf("%s %s", sctp ? "sctp" : "tcp", line);
	if (write(fd, line, (size_t)n) != n) {
		close(fd);
		return;
	}
	add_fd(fd, FD_TCP_CONN);
}

/* Echoes what arrived; returns false when the connection is done. */
static bool on_data(int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0)
		return false;
	return write(fd, buf, (size_t)n) == n;
}

static void on_datagram(int fd)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	char buf[2048], line[256];
	int n;

	if (recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer,
		     &plen) < 0)
		return;
	getsockname(fd, (struct sockaddr *)&local, &llen);
	n = answer(line, sizeof(line), (struct sockaddr *)&local,
		   (struct sockaddr *)&peer);
	if (verbose)
		printf("udp %s", line);
	sendto(fd, line, (size_t)n, 0, (struct sockaddr *)&peer, plen);
}

static void daemonize(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("kpx_echo: fork");
		exit(1);
	}
	if (pid > 0) {
		printf("%d\n", (int)pid);
		exit(0);
	}
	setsid();
	if (!verbose && !freopen("/dev/null", "w", stdout))
		exit(1);
}

int main(int argc, char **argv)
{
	bool tcp = false, udp = false, sctp = false, background = false;
	int opt, i;

	while ((opt = getopt(argc, argv, "tusdvh")) != -1) {
		switch (opt) {
		case 's': sctp = true; break;
		case 't': tcp = true; break;
		case 'u': udp = true; break;
		case 'd': background = true; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (argc - optind < 2)
		usage(stderr, 2);
	if (!tcp && !udp && !sctp)
		tcp = udp = true;
	kpx_require_guest("kpx_echo");
	ident = argv[optind++];
	if (strlen(ident) > 64 || strchr(ident, ' ')) {
		fprintf(stderr, "kpx_echo: ID must be one word of <= 64 chars\n");
		return 2;
	}
	for (; optind < argc; optind++) {
		struct sockaddr_storage ss;
		socklen_t len = kpx_parse_addrport(argv[optind], &ss, false);

		if (!len) {
			fprintf(stderr, "kpx_echo: bad address '%s'\n",
				argv[optind]);
			return 2;
		}
		if (tcp)
			add_fd(open_socket(&ss, len, SOCK_STREAM, 0), FD_TCP_LISTEN);
		if (udp)
			add_fd(open_socket(&ss, len, SOCK_DGRAM, 0), FD_UDP);
		if (sctp)
			add_fd(open_socket(&ss, len, SOCK_STREAM, IPPROTO_SCTP),
			       FD_SCTP_LISTEN);
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (background)
		daemonize();

	for (;;) {
		if (poll(pfds, (nfds_t)nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("kpx_echo: poll");
			return 1;
		}
		for (i = nfds - 1; i >= 0; i--) {
			if (!pfds[i].revents)
				continue;
			switch (kinds[i]) {
			case FD_TCP_LISTEN:
			case FD_SCTP_LISTEN:
				on_accept(pfds[i].fd, kinds[i] == FD_SCTP_LISTEN);
				break;
			case FD_UDP:
				on_datagram(pfds[i].fd);
				break;
			case FD_TCP_CONN:
				if (!on_data(pfds[i].fd))
					del_fd(i);
				break;
			}
		}
	}
}
