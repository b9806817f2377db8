/* SPDX-License-Identifier: GPL-2.0-only */
/* Socket address text forms used by the selftest tools. */
#ifndef KPX_SELFTEST_SOCKADDR_H
#define KPX_SELFTEST_SOCKADDR_H

#include <stdbool.h>
#include <sys/socket.h>

/* Large enough for "[ipv6%scope]:65535". */
#define KPX_ADDRSTRLEN 80

/*
 * kpx_parse_addrport() - parse "A.B.C.D:PORT" or "[IPV6]:PORT" (numeric
 * only, no name lookup) into @ss; the port may be 0 only if @port0_ok.
 * Returns the sockaddr length, or 0 if @text is malformed.
 */
socklen_t kpx_parse_addrport(const char *text, struct sockaddr_storage *ss,
			     bool port0_ok);

/*
 * kpx_format_addrport() - write @sa as "A.B.C.D:PORT" or "[IPV6]:PORT"
 * into @buf (KPX_ADDRSTRLEN bytes).  Returns @buf.
 */
char *kpx_format_addrport(const struct sockaddr *sa, char *buf);

#endif
