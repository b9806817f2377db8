/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Splits a byte stream into JSON values as it arrives, in chunks cut
 * anywhere (a list response is one value, a watch stream one event object
 * per line).  Wraps json-c's incremental json_tokener.
 */
#ifndef KPX_JSONSTREAM_H
#define KPX_JSONSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json_object.h>

struct kpx_jstream;

/*
 * Called for each complete top-level value; @obj is released after the
 * call (take a reference to keep it).  Return 0 to go on, or a negative
 * value to stop: kpx_jstream_feed() then returns that value.
 */
typedef int (*kpx_jstream_cb)(void *ctx, struct json_object *obj);

/*
 * @what names the stream in error logs (e.g. "services").  @max_depth is the
 * deepest nesting accepted.  Returns NULL on allocation failure.
 */
struct kpx_jstream *kpx_jstream_new(const char *what, int max_depth);
void kpx_jstream_free(struct kpx_jstream *s);

/* Forgets any partial value: for a new response. */
void kpx_jstream_reset(struct kpx_jstream *s);

/*
 * Parses @len bytes, continuing a value left incomplete by the previous
 * call.  On malformed JSON: with @resync (newline-delimited streams) logs
 * it, skips to the next '\n' and goes on; without, logs it and returns
 * -EBADMSG.  Returns 0 when all bytes were consumed, or the callback's
 * negative value.
 */
int kpx_jstream_feed(struct kpx_jstream *s, const char *p, size_t len,
		     bool resync, kpx_jstream_cb cb, void *ctx);

/* Number of malformed values skipped since kpx_jstream_new(). */
unsigned long kpx_jstream_errors(const struct kpx_jstream *s);

#endif
