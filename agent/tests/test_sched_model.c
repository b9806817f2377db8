// SPDX-License-Identifier: GPL-2.0-only
/*
 * In the agent: the desired state carries the scheduler (the
 * Service's kpx.io/scheduler annotation, else --scheduler) and ClientIP
 * session affinity (sessionAffinityConfig.clientIP.timeoutSeconds, default
 * 10800), and a change of either is a change of configuration.
 */
#include "testlib_model.h"

static struct json_object *svc(const char *name, const char *ip,
			       const char *ann, const char *aff)
{
	return J("{'metadata':{'name':'%s','namespace':'t'%s},'spec':{"
		 "'clusterIPs':['%s'],'ports':[{'name':'http','port':80}]%s}}",
		 name, ann, ip, aff);
}

static struct json_object *slice(const char *name, const char *service,
				 const char *addr)
{
	return J("{'metadata':{'name':'%s','namespace':'t','labels':"
		 "{'kubernetes.io/service-name':'%s'}},'addressType':'IPv4',"
		 "'ports':[{'name':'http','port':8080}],'endpoints':"
		 "[{'addresses':['%s']}]}", name, service, addr);
}

/* The desired frontend with VIP @ip, or NULL. */
static const struct kpx_service *find(const struct kpx_service *v, size_t n,
				      const char *ip)
{
	struct in_addr a;

	inet_pton(AF_INET, ip, &a);
	for (size_t i = 0; i < n; i++)
		if (v[i].family == AF_INET && v[i].addr.v4.s_addr == a.s_addr)
			return &v[i];
	return NULL;
}

int main(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_service *v = NULL, b;
	const struct kpx_service *s;
	struct kpx_config c;
	size_t n = 0;
	int r;

	case_config(&c, "node1");
	snprintf(c.scheduler, sizeof(c.scheduler), "rr");
	kpx_model_set_config(m, &c);
	ok(!apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		  svc("a", "10.96.0.1", ",'annotations':{'kpx.io/scheduler':'mh'}",
		      ",'sessionAffinity':'ClientIP','sessionAffinityConfig':"
		      "{'clientIP':{'timeoutSeconds':30}}")) &&
	   !apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		  svc("b", "10.96.0.2", "", ",'sessionAffinity':'ClientIP'")) &&
	   !apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		  svc("c", "10.96.0.3",
		      ",'annotations':{'kpx.io/scheduler':'bogus'}",
		      ",'sessionAffinity':'None'")),
	   "three Services accepted");
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, slice("a-1", "a", "10.244.1.2"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, slice("b-1", "b", "10.244.1.3"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, slice("c-1", "c", "10.244.1.4"));
	r = kpx_model_desired(m, &v, &n);
	ok(!r && n == 3, "desired state: %zu frontends", n);

	s = find(v, n, "10.96.0.1");
	ok(s && !strcmp(s->scheduler, "mh") && s->affinity_timeout == 30,
	   "annotation mh wins over --scheduler rr; ClientIP timeout 30");
	s = find(v, n, "10.96.0.2");
	ok(s && !strcmp(s->scheduler, "rr") && s->affinity_timeout == 10800,
	   "no annotation: --scheduler rr; ClientIP without config: 10800");
	s = find(v, n, "10.96.0.3");
	ok(s && !strcmp(s->scheduler, "rr") && s->affinity_timeout == 0,
	   "unknown annotation ignored; sessionAffinity None: no affinity");

	s = find(v, n, "10.96.0.2");
	if (s) {
		b = *s;
		ok(kpx_service_same_config(s, &b), "same config as itself");
		b.affinity_timeout = 20;
		ok(!kpx_service_same_config(s, &b), "timeout change is a change");
		b = *s;
		snprintf(b.scheduler, sizeof(b.scheduler), "sh");
		ok(!kpx_service_same_config(s, &b), "scheduler change is a change");
		b = *s;
		b.scheduler[0] = '\0';
		snprintf(((struct kpx_service *)s)->scheduler, sizeof(s->scheduler),
			 "random");
		ok(kpx_service_same_config(s, &b),
		   "\"\" and \"random\" are the same scheduler");
	}
	kpx_services_free(v, n);
	kpx_model_free(m);
	return tap_done();
}
