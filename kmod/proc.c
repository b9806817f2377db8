// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/net/kpx/services: the frontends of the reader's network namespace.
 *
 * Format: one header line, then per frontend one line and one indented line
 * per backend (IPv6 addresses in brackets, compressed form):
 *
 *   Prot VIP:Port Flags Conns Rejects
 *   TCP  10.96.0.10:80 0x0 60 0
 *     -> 10.244.1.2:8080 weight 1 conns 20
 *   UDP  [fd00::10]:53 0x1 0 3
 *
 * Prot is TCP, UDP or SCTP.  Flags is KPX_SVC_F_* in hex.  Conns counts new
 * connections scheduled to a backend, Rejects new connections refused for
 * want of a backend (answered with port unreachable, or dropped with
 * KPX_SVC_F_DROP_EMPTY).  A backend's conns counts the new connections sent
 * to it.  All counters are decimal u64 and count from the frontend's (or
 * backend's) creation.  Backends are listed sorted by address, then port.
 * The file is a snapshot taken under RCU; it is not atomic across frontends.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/in.h>
#include <net/net_namespace.h>

#include "proc.h"
#include "pernet.h"
#include "stats.h"

static const char *proto_name(u8 protocol)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return "TCP";
	case IPPROTO_UDP:
		return "UDP";
	case IPPROTO_SCTP:
		return "SCTP";
	}
	return "?";
}

static void put_addr(struct seq_file *seq, u8 family,
		     const union kpx_addr *addr, __be16 port)
{
	if (family == AF_INET)
		seq_printf(seq, "%pI4:%u", &addr->ip, ntohs(port));
	else
		seq_printf(seq, "[%pI6c]:%u", addr->bytes, ntohs(port));
}

static int services_show(struct seq_file *seq, void *v)
{
	struct kpx_net *kn = kpx_net(seq_file_single_net(seq));
	const struct kpx_bset *set;
	struct kpx_stats st;
	struct kpx_svc *svc;
	u32 i;

	seq_puts(seq, "Prot VIP:Port Flags Conns Rejects\n");
	rcu_read_lock();
	list_for_each_entry_rcu(svc, &kn->svc_list, list) {
		seq_printf(seq, "%-4s ", proto_name(svc->key.protocol));
		put_addr(seq, svc->key.family, &svc->key.addr, svc->key.port);
		kpx_stats_sum(svc->stats, &st);
		seq_printf(seq, " 0x%x %llu %llu\n", READ_ONCE(svc->flags),
			   st.conns, st.rejects);
		set = rcu_dereference(svc->bset);
		for (i = 0; set && i < set->count; i++) {
			const struct kpx_backend *be = set->be[i];

			seq_puts(seq, "  -> ");
			put_addr(seq, svc->key.family, &be->addr, be->port);
			seq_printf(seq, " weight %u conns %llu\n",
				   READ_ONCE(be->weight),
				   (u64)atomic64_read(&be->conns));
		}
	}
	rcu_read_unlock();
	return 0;
}

int kpx_proc_init(struct net *net)
{
	struct kpx_net *kn = kpx_net(net);

	kn->proc_dir = proc_net_mkdir(net, "kpx", net->proc_net);
	if (!kn->proc_dir)
		return -ENOMEM;
	if (!proc_create_net_single("services", 0444, kn->proc_dir,
				    services_show, NULL)) {
		remove_proc_subtree("kpx", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

void kpx_proc_exit(struct net *net)
{
	remove_proc_subtree("kpx", net->proc_net);
}
