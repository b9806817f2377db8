/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A growable text buffer for generated rule text (iptables-restore input,
 * nft scripts): printf appends; the first failure sticks in err and later
 * appends do nothing, so a generator checks once at the end.
 */
#ifndef KPX_STRBUF_H
#define KPX_STRBUF_H

#include <stddef.h>

struct kpx_strbuf {
	char *s;		/* NUL-terminated text, or NULL while empty */
	size_t len, cap;	/* bytes used (without the NUL), allocated */
	int err;		/* 0, or -ENOMEM / -EINVAL of the first failure */
};

/* Appends printf(@fmt, ...) to @b. */
void kpx_strbuf_printf(struct kpx_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Empties @b and clears err; keeps the memory. */
void kpx_strbuf_reset(struct kpx_strbuf *b);

/* Frees the text; @b is empty afterwards. */
void kpx_strbuf_free(struct kpx_strbuf *b);

#endif
