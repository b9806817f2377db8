// SPDX-License-Identifier: GPL-2.0-only
/*
 * The growable text buffer of strbuf.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

void kpx_strbuf_printf(struct kpx_strbuf *b, const char *fmt, ...)
{
	size_t room, cap;
	va_list ap;
	char *s;
	int n;

	if (b->err)
		return;
	for (;;) {
		room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		cap = b->cap ? b->cap * 2 : 4096;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->err = -ENOMEM;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

void kpx_strbuf_reset(struct kpx_strbuf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->s)
		b->s[0] = '\0';
}

void kpx_strbuf_free(struct kpx_strbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}
