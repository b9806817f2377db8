// SPDX-License-Identifier: GPL-2.0-only
/*
 * The netlink side of the model's output, without a kernel: a frontend
 * with source ranges goes into KPX_CMD_SET_SERVICE and reads back through
 * the dump parser (KPX_SVC_A_SOURCE_RANGES), and kpx_model_ns_config()'s
 * result goes into KPX_CMD_SET_CONFIG with every attribute as the uapi
 * header specifies.  TAP; exits non-zero on any failure.
 */
#include <netlink/genl/genl.h>
#include "dp/kpx/nl_priv.h"
#include "testlib_model.h"

static struct kpx_nl fake = { .g = { .sk = NULL, .family_id = 0x1234 } };

static void test_source_ranges_roundtrip(void)
{
	struct kpx_service s = { 0 };
	struct kpx_backend be = { .port = 8443, .weight = 1 };
	struct kpx_cidr r[3];
	struct kpx_nl_dumpbuf d = { 0 };
	struct nl_msg *msg;
	char a[64], b[64];
	int ret;

	s.family = AF_INET;
	s.protocol = IPPROTO_TCP;
	inet_pton(AF_INET, "198.51.100.60", &s.addr);
	s.port = 443;
	s.flags = KPX_SVC_F_MASQ_NONLOCAL;
	inet_pton(AF_INET, "10.244.1.130", &be.addr);
	s.backends = &be;
	s.nbackends = 1;
	cidr(&r[0], "203.0.113.0/24");
	cidr(&r[1], "198.51.100.60/32");
	cidr(&r[2], "0.0.0.0/0");
	s.source_ranges = r;
	s.nsource_ranges = 3;
	ret = kpx_nl_build_set(&fake, &s, &msg);
	ok(ret == 0, "nl: SET with 3 source ranges built");
	if (ret)
		return;
	ret = kpx_nl_parse_service(nlmsg_hdr(msg), &d);
	ok(ret == 0 && d.n == 1 && d.v[0].nsource_ranges == 3 && d.v[0].nbackends == 1,
	   "nl: parsed back: 1 frontend, 3 ranges, 1 backend");
	if (!ret && d.n == 1 && d.v[0].nsource_ranges == 3) {
		ok(!strcmp(cidr_str(&d.v[0].source_ranges[0], a, sizeof(a)), "203.0.113.0/24") &&
		   !strcmp(cidr_str(&d.v[0].source_ranges[1], b, sizeof(b)), "198.51.100.60/32") &&
		   d.v[0].source_ranges[2].len == 0,
		   "nl: ranges in order: %s %s and /0", a, b);
		kpx_service_normalize(&d.v[0], 4);
		kpx_service_normalize(&s, 4);
		ok(kpx_service_same_config(&s, &d.v[0]),
		   "nl: normalized, the read-back frontend has the same config");
		d.v[0].source_ranges[0].len = 25;
		ok(!kpx_service_same_config(&s, &d.v[0]),
		   "nl: a different range is a different config");
		d.v[0].nsource_ranges = 2;
		ok(!kpx_service_same_config(&s, &d.v[0]),
		   "nl: a missing range is a different config");
		d.v[0].nsource_ranges = 3;
	}
	kpx_nl_dump_reset(&d);
	nlmsg_free(msg);

	s.nsource_ranges = 0;
	s.source_ranges = NULL;
	ret = kpx_nl_build_set(&fake, &s, &msg);
	ok(ret == 0 && kpx_nl_parse_service(nlmsg_hdr(msg), &d) == 0 && d.n == 1 &&
	   d.v[0].nsource_ranges == 0 && !d.v[0].source_ranges,
	   "nl: no ranges: attribute left out, none read back");
	kpx_nl_dump_reset(&d);
	if (!ret)
		nlmsg_free(msg);
}

static void test_set_config(void)
{
	struct nla_policy cfg_pol[KPX_CFG_A_MAX + 1] = {
		[KPX_CFG_A_LOCAL_CIDRS] = { .type = NLA_NESTED },
		[KPX_CFG_A_LOCAL_IFNAME] = { .type = NLA_STRING },
		[KPX_CFG_A_LOCAL_IFPREFIX] = { .type = NLA_STRING },
	};
	struct nlattr *tb[KPX_A_MAX + 1], *ctb[KPX_CFG_A_MAX + 1];
	struct kpx_model *m = kpx_model_new();
	struct kpx_ns_config nc;
	struct kpx_config c;
	struct kpx_cidr *v = NULL;
	struct nl_msg *msg;
	struct genlmsghdr *gh;
	size_t n = 0;
	char a[64], b[64];
	int ret;

	case_config(&c, "node-a");
	cidr(&c.cluster_cidrs[1], "fd00:10:244::/56");
	c.n_cluster_cidrs = 2;
	kpx_model_set_config(m, &c);
	kpx_model_ns_config(m, &nc);
	ret = kpx_nl_build_config(&fake, &nc, &msg);
	ok(ret == 0, "cfg: SET_CONFIG built");
	if (ret)
		goto out;
	gh = nlmsg_data(nlmsg_hdr(msg));
	ok(nlmsg_hdr(msg)->nlmsg_type == 0x1234 && gh->cmd == KPX_CMD_SET_CONFIG &&
	   gh->version == KPX_GENL_VERSION, "cfg: family, command, version");
	ret = genlmsg_parse(nlmsg_hdr(msg), 0, tb, KPX_A_MAX, NULL);
	ok(ret == 0 && tb[KPX_A_CONFIG] &&
	   nla_parse_nested(ctb, KPX_CFG_A_MAX, tb[KPX_A_CONFIG], cfg_pol) == 0 &&
	   ctb[KPX_CFG_A_LOCAL_CIDRS] && ctb[KPX_CFG_A_LOCAL_IFNAME] &&
	   ctb[KPX_CFG_A_LOCAL_IFPREFIX],
	   "cfg: KPX_A_CONFIG with all three settings");
	ok(ctb[KPX_CFG_A_LOCAL_CIDRS] &&
	   kpx_nl_parse_cidrs(ctb[KPX_CFG_A_LOCAL_CIDRS], &v, &n) == 0 && n == 2 &&
	   !strcmp(cidr_str(&v[0], a, sizeof(a)), "10.244.0.0/16") &&
	   !strcmp(cidr_str(&v[1], b, sizeof(b)), "fd00:10:244::/56"),
	   "cfg: local prefixes 10.244.0.0/16 and fd00:10:244::/56");
	ok(ctb[KPX_CFG_A_LOCAL_IFNAME] && !strcmp(nla_get_string(ctb[KPX_CFG_A_LOCAL_IFNAME]), "") &&
	   ctb[KPX_CFG_A_LOCAL_IFPREFIX] && !strcmp(nla_get_string(ctb[KPX_CFG_A_LOCAL_IFPREFIX]), ""),
	   "cfg: interface name and prefix sent empty (cleared)");
	free(v);
	nlmsg_free(msg);

	nc.nlocal_cidrs = KPX_CIDRS_MAX + 1;
	ok(kpx_nl_build_config(&fake, &nc, &msg) == -EINVAL, "cfg: too many prefixes: -EINVAL");
out:
	kpx_model_free(m);
}

int main(void)
{
	test_source_ranges_roundtrip();
	test_set_config();
	return tap_done();
}
