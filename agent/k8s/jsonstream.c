// SPDX-License-Identifier: GPL-2.0-only
/*
 * Incremental JSON value splitter over json_tokener.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json_tokener.h>

#include "k8s/jsonstream.h"
#include "base/log.h"

struct kpx_jstream {
	json_tokener *tok;
	const char *what;
	bool skip_line;		/* resyncing: drop bytes up to the next '\n' */
	unsigned long errors;
};

struct kpx_jstream *kpx_jstream_new(const char *what, int max_depth)
{
	struct kpx_jstream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->what = what;
	s->tok = json_tokener_new_ex(max_depth);
	if (!s->tok) {
		free(s);
		return NULL;
	}
	return s;
}

void kpx_jstream_free(struct kpx_jstream *s)
{
	if (!s)
		return;
	json_tokener_free(s->tok);
	free(s);
}

void kpx_jstream_reset(struct kpx_jstream *s)
{
	json_tokener_reset(s->tok);
	s->skip_line = false;
}

unsigned long kpx_jstream_errors(const struct kpx_jstream *s)
{
	return s->errors;
}

int kpx_jstream_feed(struct kpx_jstream *s, const char *p, size_t len,
		     bool resync, kpx_jstream_cb cb, void *ctx)
{
	while (len) {
		int chunk = len > INT_MAX ? INT_MAX : (int)len;
		enum json_tokener_error jerr;
		struct json_object *obj;
		size_t used;
		int ret;

		if (s->skip_line) {
			const char *nl = memchr(p, '\n', len);

			if (!nl)
				return 0;
			len -= (size_t)(nl + 1 - p);
			p = nl + 1;
			s->skip_line = false;
			continue;
		}
		obj = json_tokener_parse_ex(s->tok, p, chunk);
		jerr = json_tokener_get_error(s->tok);
		if (jerr == json_tokener_continue) {
			/* All of the chunk consumed; the value goes on. */
			p += chunk;
			len -= (size_t)chunk;
			continue;
		}
		used = json_tokener_get_parse_end(s->tok);
		if (jerr != json_tokener_success) {
			s->errors++;
			json_tokener_reset(s->tok);
			kpx_err("k8s", "%s: malformed JSON (%s)%s", s->what,
				json_tokener_error_desc(jerr),
				resync ? ", skipped to the next line" : "");
			if (!resync)
				return -EBADMSG;
			s->skip_line = true;
		} else {
			ret = cb(ctx, obj);
			json_object_put(obj);
			if (ret < 0)
				return ret;
		}
		/*
		 * After a value json-c stops at its end; after an error at the
		 * bad byte, where the search for the next line starts.
		 */
		p += used;
		len -= used;
	}
	return 0;
}
