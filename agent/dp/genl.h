/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One generic-netlink exchange on libnl-genl-3, for the data planes'
 * kernel clients (dp/kpx: the kpx family, kpxctl's too; dp/ipvs: IPVS): a
 * blocking socket with extended ACKs and the family resolved; one request
 * at a time, each reply handed to a parser, read up to its ACK, its error
 * or the end of its dump, keeping the kernel's exact errno (libnl's own
 * mapping folds some together) and extended-ACK message.  Errors are
 * negative errno values; libnl's own codes only stand for failures that
 * are not the kernel's (allocation, socket I/O): kpx_genl_errno().
 */
#ifndef KPX_GENL_H
#define KPX_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>

struct kpx_genl {
	struct nl_sock *sk;
	int family_id;	  /* the resolved family */
	char errmsg[256]; /* the last extack text, or "" */
};

/* The state of one request/response exchange. */
struct kpx_genl_req {
	struct kpx_genl *g;
	int err;   /* the kernel's errno, negative; 0 if none */
	bool done; /* ACK, error or NLMSG_DONE seen */
	bool intr; /* a dump message carried NLM_F_DUMP_INTR */
	int (*parse)(struct nlmsghdr *nlh, void *arg); /* each reply */
	void *arg;
	int parse_err; /* the first error @parse returned */
};

/*
 * Opens @g: a socket in the caller's network namespace that asks for
 * extended ACKs without the echoed request, receive buffers that grow to
 * the largest message, and with @bufsize > 0 socket buffers of @bufsize
 * bytes (above net.core.[rw]mem_max where CAP_NET_ADMIN allows); then
 * resolves @family.  -ENOENT when @family is not registered (its module not
 * loaded), -ENOMEM, or another errno of the socket.
 */
int kpx_genl_open(struct kpx_genl *g, const char *family, int bufsize);
/* Closes what kpx_genl_open() opened (not @g itself); idempotent. */
void kpx_genl_close(struct kpx_genl *g);

/* A new request for @cmd of @version with @size bytes of payload room
 * (0: libnl's default); NULL on ENOMEM. */
struct nl_msg *kpx_genl_msg(const struct kpx_genl *g, uint8_t cmd, int flags,
			    uint8_t version, size_t size);

/*
 * Sends @msg (consumed) and receives until its ACK, error or NLMSG_DONE,
 * each reply through @r->parse (whose first error is returned when the
 * kernel's is 0).  A dump interrupted by a concurrent change sets
 * @r->intr.  Returns 0, the kernel's errno, or -errno.
 */
int kpx_genl_transact(struct kpx_genl *g, struct nl_msg *msg,
		      struct kpx_genl_req *r);

/* libnl's NLE_* (either sign) as a negative errno; -EIO if unknown. */
int kpx_genl_errno(int nle);

/*
 * libnl callbacks of kpx_genl_transact(), @arg a struct kpx_genl_req: a
 * kernel error (errno and extack text into the request and its
 * kpx_genl), and the NLMSG_DONE of a dump (its error, extack and
 * NLM_F_DUMP_INTR).  Both return NL_STOP.  For unit tests.
 */
int kpx_genl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg);
int kpx_genl_on_finish(struct nl_msg *msg, void *arg);

#endif
