// SPDX-License-Identifier: GPL-2.0-only
/*
 * jsonstream.c: watch streams cut at every byte, a corrupt line skipped,
 * a list value that fails, callback stop, reset, depth limit.  TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json_object.h>

#include "k8s/jsonstream.h"
#include "base/log.h"

#include "lib/tap.h"

/* Collects "TYPE:name" of each event, space separated. */
struct seen {
	char buf[512];
	int stop_after;		/* return -42 after this many, 0 = never */
	int n;
};

static int collect(void *ctx, struct json_object *ev)
{
	struct seen *s = ctx;
	struct json_object *t, *o, *m, *name;
	size_t len = strlen(s->buf);

	if (json_object_object_get_ex(ev, "type", &t) &&
	    json_object_object_get_ex(ev, "object", &o) &&
	    json_object_object_get_ex(o, "metadata", &m) &&
	    json_object_object_get_ex(m, "name", &name))
		snprintf(s->buf + len, sizeof(s->buf) - len, "%s%s:%s", len ? " " : "",
			 json_object_get_string(t), json_object_get_string(name));
	else
		snprintf(s->buf + len, sizeof(s->buf) - len, "%s?", len ? " " : "");
	s->n++;
	return s->stop_after && s->n >= s->stop_after ? -42 : 0;
}

static const char stream[] =
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"x\":\"multi\\nline {\\\"\"}}}\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\"},\"spec\":[1,2,{\"k\":null}]}}\n"
	"{\"type\":\"BROKEN\",\"object\":{\"metadata\":{\"name\": nope}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"name\":\"d\"}}}\n";

/* Feeds the stream in pieces of @step bytes; true if all came out right. */
static bool feed_in_steps(size_t step, unsigned long *errors)
{
	struct kpx_jstream *js = kpx_jstream_new("test", 16);
	struct seen s = { .buf = "" };
	size_t len = strlen(stream), off;
	bool good = true;

	for (off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;

		if (kpx_jstream_feed(js, stream + off, n, true, collect, &s))
			good = false;
	}
	*errors = kpx_jstream_errors(js);
	kpx_jstream_free(js);
	if (strcmp(s.buf, "ADDED:a MODIFIED:b DELETED:c BOOKMARK:d")) {
		printf("# step %zu: %s\n", step, s.buf);
		good = false;
	}
	return good;
}

int main(void)
{
	struct kpx_jstream *js;
	struct seen s = { .buf = "" };
	unsigned long errors, bad_steps = 0, bad_errors = 0;
	size_t step;
	int r;

	kpx_log_set_fd(open("/dev/null", O_WRONLY));
	printf("TAP version 13\n");

	ok(feed_in_steps(strlen(stream), &errors) && errors == 1,
	   "whole stream at once: 4 events, the corrupt line skipped (%lu error)", errors);
	for (step = 1; step < strlen(stream); step++) {
		if (!feed_in_steps(step, &errors))
			bad_steps++;
		if (errors != 1)
			bad_errors++;
	}
	ok(bad_steps == 0, "cut into pieces of every size 1..%zu: same 4 events (%lu bad)",
	   strlen(stream) - 1, bad_steps);
	ok(bad_errors == 0, "and exactly one error each time (%lu bad)", bad_errors);

	js = kpx_jstream_new("list", 16);
	r = kpx_jstream_feed(js, "{\"items\": [1, 2,, 3]}", 21, false, collect, &s);
	ok(r == -EBADMSG && s.n == 0 && kpx_jstream_errors(js) == 1,
	   "list without resync: -EBADMSG, nothing delivered (%d)", r);

	kpx_jstream_reset(js);
	r = kpx_jstream_feed(js, "{\"items\": [", 11, false, collect, &s);
	ok(r == 0 && s.n == 0, "incomplete value: consumed, nothing delivered");
	kpx_jstream_reset(js);
	r = kpx_jstream_feed(js, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"z\"}}}",
			     51, false, collect, &s);
	ok(r == 0 && !strcmp(s.buf, "ADDED:z"), "after reset a new value parses: %s", s.buf);

	s = (struct seen){ .buf = "", .stop_after = 2 };
	kpx_jstream_reset(js);
	r = kpx_jstream_feed(js, stream, strlen(stream), true, collect, &s);
	ok(r == -42 && !strcmp(s.buf, "ADDED:a MODIFIED:b"),
	   "callback stop: its value returned, later events not delivered (%d, %s)", r, s.buf);
	kpx_jstream_free(js);

	js = kpx_jstream_new("deep", 4);
	s = (struct seen){ .buf = "" };
	{
		static const char deep[] = "[[[[[1]]]]]\n"
			"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"ok\"}}}\n";

		r = kpx_jstream_feed(js, deep, strlen(deep), true, collect, &s);
	}
	ok(r == 0 && kpx_jstream_errors(js) == 1 && !strcmp(s.buf, "ADDED:ok"),
	   "too deep: rejected, the next line still parsed (%d, %lu errors, %s)",
	   r, kpx_jstream_errors(js), s.buf);
	kpx_jstream_free(js);

	return tap_done();
}
