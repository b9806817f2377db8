// SPDX-License-Identifier: GPL-2.0-only
/*
 * The start-up wait for the own Node (nodewait.h): kube-proxy's two phases
 * and outcomes, the log lines that say what is awaited, the test timeouts'
 * parser; and kpx_model_own_node() on a real model.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "base/log.h"
#include "k8s/decode.h"
#include "model/model.h"
#include "model/nodewait.h"
#include "lib/tap.h"

static char logbuf[8192];
static FILE *logf;

/* Starts capturing the agent's log; log_text() returns what came since. */
static void log_reset(void)
{
	if (logf)
		fclose(logf);
	logf = tmpfile();
	kpx_log_set_fd(fileno(logf));
}

static const char *log_text(void)
{
	size_t n;

	rewind(logf);
	n = fread(logbuf, 1, sizeof(logbuf) - 1, logf);
	logbuf[n] = '\0';
	return logbuf;
}

/* The severity letter of the logged line that holds @what, or 0. */
static char line_sev(const char *what)
{
	const char *t = log_text(), *p = strstr(t, what);

	if (!p)
		return 0;
	while (p > t && p[-1] != '\n')
		p--;
	return *p;
}

#define W KPX_NODEWAIT_WAITING
#define D KPX_NODEWAIT_DONE
#define F KPX_NODEWAIT_FAILED

static void test_found_at_list(void)
{
	struct kpx_nodewait w;

	kpx_nodewait_init(&w, "node-a", false, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, true, 1, 0, 1000) == D,
	   "Node with an address at the list: done at once");
	ok(!strstr(log_text(), "waiting"), "nothing said about waiting");
	ok(kpx_nodewait_step(&w, false, 0, 0, 2000) == D, "done stays done");

	kpx_nodewait_init(&w, "node-a", true, 30000, 300000);
	ok(kpx_nodewait_step(&w, true, 1, 1, 1000) == D,
	   "NodeCIDR: Node with an address and a podCIDR: done at once");
}

static void test_late_node(void)
{
	struct kpx_nodewait w;

	kpx_nodewait_init(&w, "node-a", false, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, false, 0, 0, 1000) == W, "no Node at the list: waiting");
	ok(strstr(log_text(), "waiting up to 30s for Node node-a to exist with an InternalIP or ExternalIP address") != NULL,
	   "says what it waits for and how long");
	ok(kpx_nodewait_step(&w, true, 0, 0, 5000) == W, "Node without addresses: still waiting");
	ok(kpx_nodewait_step(&w, true, 1, 0, 6000) == D, "Node gets an address: done");
	ok(strstr(log_text(), "Node node-a found") != NULL, "logged");
}

static void test_never_default_mode(void)
{
	struct kpx_nodewait w;

	kpx_nodewait_init(&w, "node-a", false, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, false, 0, 0, 1000) == W, "no Node: waiting");
	ok(kpx_nodewait_step(&w, false, 0, 0, 30999) == W, "1 ms before 30 s: waiting");
	ok(kpx_nodewait_step(&w, false, 0, 0, 31000) == D,
	   "at 30 s: goes on without the Node, as kube-proxy");
	ok(line_sev("timed out waiting for Node node-a to exist") == 'E',
	   "timeout logged as an error");

	kpx_nodewait_init(&w, "node-a", false, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, true, 0, 0, 0) == W, "Node without IPs: waiting");
	ok(strstr(log_text(), "to be assigned an InternalIP or ExternalIP address") != NULL,
	   "says it waits for the address");
	ok(kpx_nodewait_step(&w, true, 0, 0, 30000) == D, "at 30 s: goes on");
	ok(strstr(log_text(), "timed out waiting for Node node-a to be assigned IPs") != NULL,
	   "timeout names the missing IPs");
}

static void test_node_cidr(void)
{
	struct kpx_nodewait w;

	kpx_nodewait_init(&w, "node-a", true, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, true, 1, 0, 0) == W, "NodeCIDR, no podCIDRs: waiting");
	ok(strstr(log_text(), "waiting up to 300s for Node node-a to be allocated spec.podCIDRs") != NULL,
	   "says it waits for podCIDRs");
	ok(kpx_nodewait_step(&w, true, 1, 0, 299999) == W, "just before 5 min: waiting");
	ok(kpx_nodewait_step(&w, true, 1, 1, 299999) == D, "podCIDR allocated: done");

	kpx_nodewait_init(&w, "node-a", true, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, true, 1, 0, 0) == W &&
	   kpx_nodewait_step(&w, true, 1, 0, 300000) == F,
	   "no podCIDRs after 5 min: fails (exit 1, as kube-proxy)");
	ok(strstr(log_text(), "timeout waiting for PodCIDR allocation on node \\\"node-a\\\"") != NULL,
	   "kube-proxy's message");
	ok(kpx_nodewait_step(&w, true, 1, 1, 300001) == F, "failed stays failed");

	/* no Node at all: 30 s for the IPs, then 5 min more for podCIDRs */
	kpx_nodewait_init(&w, "node-a", true, 30000, 300000);
	log_reset();
	ok(kpx_nodewait_step(&w, false, 0, 0, 0) == W &&
	   kpx_nodewait_step(&w, false, 0, 0, 30000) == W,
	   "NodeCIDR, no Node: still waiting after 30 s");
	ok(kpx_nodewait_step(&w, false, 0, 0, 329999) == W, "and until 30 s + 5 min");
	ok(kpx_nodewait_step(&w, false, 0, 0, 330000) == F, "then fails");
	ok(strstr(log_text(), "timeout waiting for node \\\"node-a\\\" to exist") != NULL,
	   "kube-proxy's message for a missing Node");
}

static void test_timeouts_env(void)
{
	int64_t a, b;

	ok(kpx_nodewait_timeouts(NULL, &a, &b) == 0 && a == 30000 && b == 300000,
	   "unset: kube-proxy's 30 s and 5 min");
	ok(kpx_nodewait_timeouts("2000,3000", &a, &b) == 0 && a == 2000 && b == 3000,
	   "\"2000,3000\" parsed");
	ok(kpx_nodewait_timeouts("2000", &a, &b) < 0 && a == 30000 && b == 300000,
	   "one number: -EINVAL, defaults kept");
	ok(kpx_nodewait_timeouts("x,1", &a, &b) < 0 && kpx_nodewait_timeouts("1,2x", &a, &b) < 0 &&
	   kpx_nodewait_timeouts("-1,2", &a, &b) < 0, "garbage and negatives refused");
}

static void test_model_own_node(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_config c;
	struct json_object *o;
	size_t na = 9, nc = 9;

	memset(&c, 0, sizeof(c));
	snprintf(c.hostname, sizeof(c.hostname), "node-a");
	kpx_model_set_config(m, &c);
	ok(!kpx_model_own_node(m, &na, &nc) && na == 0 && nc == 0, "model: no Node yet");
	o = json_tokener_parse("{\"metadata\": {\"name\": \"node-b\"}, \"status\": {\"addresses\": "
			       "[{\"type\": \"InternalIP\", \"address\": \"192.0.2.12\"}]}}");
	kpx_model_apply(m, KPX_KIND_NODE, KPX_EV_ADDED, o);
	json_object_put(o);
	ok(!kpx_model_own_node(m, &na, &nc), "model: another Node is not the own one");
	o = json_tokener_parse("{\"metadata\": {\"name\": \"node-a\"}, \"spec\": {\"podCIDRs\": "
			       "[\"10.244.1.0/24\", \"fd00:10:244:1::/64\"]}, \"status\": {\"addresses\": "
			       "[{\"type\": \"Hostname\", \"address\": \"node-a\"}, "
			       "{\"type\": \"InternalIP\", \"address\": \"192.0.2.11\"}]}}");
	kpx_model_apply(m, KPX_KIND_NODE, KPX_EV_ADDED, o);
	json_object_put(o);
	ok(kpx_model_own_node(m, &na, &nc) && na == 1 && nc == 2,
	   "model: own Node, 1 host IP (Hostname not counted), 2 podCIDRs (%zu, %zu)", na, nc);
	kpx_model_free(m);
}

int main(void)
{
	printf("TAP version 13\n");
	test_found_at_list();
	test_late_node();
	test_never_default_mode();
	test_node_cidr();
	test_timeouts_env();
	test_model_own_node();
	kpx_log_set_fd(2);
	return tap_done();
}
