/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fixtures of the agent's unit tests: frontends and backends (service.h) as
 * the tests write them.  Addresses are text (inet_pton of @family); a
 * malformed one is a bug in the test and aborts it.
 */
#ifndef KPX_TESTS_FIXTURES_H
#define KPX_TESTS_FIXTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/service.h"

/* The frontend @vip:@port of @proto (IPPROTO_*): no backend, no flag. */
struct kpx_service fx_frontend(int family, uint8_t proto, const char *vip,
			       uint16_t port);

/* The backend @ip:@port with @weight (conns 0). */
struct kpx_backend fx_backend(int family, const char *ip, uint16_t port,
			      uint32_t weight);

/*
 * fx_frontend() owning a malloc'd copy of the @n backends @bes, in their
 * order (kpx_service_free() it).
 */
struct kpx_service fx_service(int family, uint8_t proto, const char *vip,
			      uint16_t port, const struct kpx_backend *bes,
			      size_t n);

/*
 * fx_frontend() owning the @n backends "ADDR:PORT[@WEIGHT]" of @bes
 * ("[ADDR6]:PORT" for IPv6), normalized (kpx_service_normalize(): sorted,
 * no duplicates).
 */
struct kpx_service fx_service_str(int family, uint8_t proto, const char *vip,
				  uint16_t port, const char *const *bes,
				  size_t n);

/*
 * The namespace settings (KPX_CMD_SET_CONFIG) with the local CIDRs
 * @cidrs ("10.244.0.0/16,fd00:10:244::/56"), @ifname and @ifprefix ("" or
 * NULL for none).
 */
struct kpx_ns_config fx_ns_config(const char *cidrs, const char *ifname,
				  const char *ifprefix);

/*
 * GET @url (loopback only) with libcurl, 5 s timeout, no proxy: the HTTP
 * status, 0 when no reply came.  The body goes to @body (NUL-terminated,
 * cut at @size - 1 bytes) unless @body is NULL.
 */
long fx_http_get(const char *url, char *body, size_t size);

/* Appends the source range @cidr ("203.0.113.0/24") to @s (aborts on a bad one). */
void fx_add_range(struct kpx_service *s, const char *cidr);

/* True when the extended regex @re (REG_NEWLINE) matches somewhere in @s. */
bool fx_matches(const char *re, const char *s);

/*
 * API objects of the sync tests, J() formats (testlib_model.h: single
 * quotes for double): FX_NODE node-a at 127.0.0.1; FX_SVC a ClusterIP
 * Service (name, resourceVersion, ClusterIP) 80/TCP to 8080; FX_EPS its
 * EndpointSlice (name, Service name, endpoint items); FX_EP one ready
 * endpoint on node-a.
 */
#define FX_NODE                                                           \
	"{'metadata':{'name':'node-a','uid':'n1','resourceVersion':'1'}," \
	"'status':{'addresses':[{'type':'InternalIP','address':'127.0.0.1'}]}}"
#define FX_SVC                                                                    \
	"{'metadata':{'name':'%s','namespace':'default','resourceVersion':'%d'}," \
	"'spec':{'type':'ClusterIP','clusterIPs':['%s'],'ipFamilies':['IPv4'],"   \
	"'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080}]}}"
#define FX_EPS                                                                    \
	"{'metadata':{'name':'%s-1','namespace':'default','resourceVersion':'1'," \
	"'labels':{'kubernetes.io/service-name':'%s'}},'addressType':'IPv4',"     \
	"'endpoints':[%s],'ports':[{'name':'http','protocol':'TCP','port':8080}]}"
#define FX_EP(a)            \
	"{'addresses':['" a \
	"'],'nodeName':'node-a','conditions':{'ready':true}}"

#endif
