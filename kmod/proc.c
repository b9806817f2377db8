// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/net/kpx/services: the frontends of the reader's network namespace.
 *
 * Format: one header line, then per frontend one line and one indented line
 * per backend (IPv6 addresses in brackets, compressed form):
 *
 *   Prot VIP:Port Flags Conns Rejects Service Kind
 *   TCP  10.96.0.10:80 0x8 60 0 default/web:http cluster-ip
 *     -> 10.244.1.2:8080 weight 1 conns 20
 *   UDP  [fd00::10]:53 0x1 0 3 - -
 *
 * Prot is TCP, UDP or SCTP.  Flags is KPX_SVC_F_* in hex.  Conns counts new
 * connections scheduled to a backend, Rejects new connections refused for
 * want of a backend (answered with port unreachable, or dropped with
 * KPX_SVC_F_DROP_EMPTY).  A backend's conns counts the new connections sent
 * to it.  All counters are decimal u64 and count from the frontend's (or
 * backend's) creation.  Backends are listed sorted by address, then port.
 * Service is the frontend's KPX_SVC_A_NAME, Kind its KPX_SVC_A_KIND
 * ("cluster-ip", "node-port", "load-balancer", "external-ip"), "-" for
 * none; both come last, so that parsers of the first five columns keep
 * working.
 *
 * The file is a seq_file of one record per line.  Each read() fills at
 * most the reader's buffer under one RCU read section, then drops it; the
 * next read() finds its place again with one table lookup of the frontend
 * it stopped in (its key and creation number, and the line within it), so
 * reading n frontends costs O(n) whatever the buffer size.  It is not a
 * snapshot: a frontend added or deleted during the read may or may not
 * appear, and a frontend whose set is replaced while it is read may show
 * backends of both sets; every other frontend appears exactly once, unless
 * the very frontend a read() stopped in is deleted before the next one,
 * which then counts lines from the top (and may skip or repeat one).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/in.h>
#include <net/net_namespace.h>

#include "proc.h"
#include "stats.h"
#include "svc.h"
#include "name.h"

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

/*
 * Where a reader of the file stands: record @pos is line @line of frontend
 * @key (line 0: the frontend's own line, line i: its backend i - 1).
 * @svc is only valid between ->start() and ->stop() (one RCU section).
 */
struct services_iter {
	struct seq_net_private p;	/* first: seq_file_net() */
	struct kpx_svc *svc;
	struct kpx_key key;
	u64 seq;			/* @svc's kpx_svc.seq */
	u32 line;
	loff_t pos;
	bool valid;			/* @key, @seq and @line are @pos's */
};

static u32 svc_lines(const struct kpx_svc *svc)
{
	const struct kpx_bset *set = rcu_dereference(svc->bset);

	return 1 + (set ? set->count : 0);
}

/* Moves @it to @svc line @line as record @pos; NULL @svc: at the end. */
static void *iter_at(struct services_iter *it, struct kpx_svc *svc,
		     u32 line, loff_t pos)
{
	it->svc = svc;
	it->pos = pos;
	it->valid = !!svc;
	if (!svc)
		return NULL;
	it->key = svc->key;
	it->seq = svc->seq;
	it->line = line;
	return it;
}

/* From frontend @svc line @line on, the first line that exists. */
static void *iter_from(struct kpx_net *kn, struct services_iter *it,
		       struct kpx_svc *svc, u32 line, loff_t pos)
{
	list_for_each_entry_from_rcu(svc, &kn->svc_list, list) {
		if (line < svc_lines(svc))
			return iter_at(it, svc, line, pos);
		line = 0;
	}
	return iter_at(it, NULL, 0, pos);
}

static void *services_start(struct seq_file *seq, loff_t *pos)
	__acquires(RCU)
{
	struct kpx_net *kn = kpx_net(seq_file_net(seq));
	struct services_iter *it = seq->private;
	struct kpx_svc *svc;
	loff_t n;

	rcu_read_lock();
	if (!*pos)
		return SEQ_START_TOKEN;
	/* Where the last read stopped: one lookup. */
	if (it->valid && it->pos == *pos) {
		svc = kpx_svc_lookup(kn, &it->key);
		/* the same frontend, not one created again with its key */
		if (svc && svc->seq == it->seq)
			return iter_from(kn, it, svc, it->line, *pos);
	}
	/* Anywhere else: count the lines from the top. */
	n = 1;
	list_for_each_entry_rcu(svc, &kn->svc_list, list) {
		u32 lines = svc_lines(svc);

		if (*pos < n + lines)
			return iter_at(it, svc, *pos - n, *pos);
		n += lines;
	}
	return iter_at(it, NULL, 0, *pos);
}

static void *services_next(struct seq_file *seq, void *v, loff_t *pos)
{
	struct kpx_net *kn = kpx_net(seq_file_net(seq));
	struct services_iter *it = seq->private;
	struct kpx_svc *svc;

	++*pos;
	if (v == SEQ_START_TOKEN) {
		svc = list_first_or_null_rcu(&kn->svc_list, struct kpx_svc,
					     list);
		return svc ? iter_from(kn, it, svc, 0, *pos) :
			     iter_at(it, NULL, 0, *pos);
	}
	return iter_from(kn, it, it->svc, it->line + 1, *pos);
}

static void services_stop(struct seq_file *seq, void *v)
	__releases(RCU)
{
	rcu_read_unlock();
}

static int services_show(struct seq_file *seq, void *v)
{
	struct services_iter *it = v;
	const struct kpx_bset *set;
	struct kpx_stats st;
	struct kpx_svc *svc;
	u32 i;

	if (v == SEQ_START_TOKEN) {
		seq_puts(seq, "Prot VIP:Port Flags Conns Rejects Service Kind\n");
		return 0;
	}
	svc = it->svc;
	if (!it->line) {
		seq_printf(seq, "%-4s ", proto_name(svc->key.protocol));
		put_addr(seq, svc->key.family, &svc->key.addr, svc->key.port);
		kpx_stats_sum(svc->stats, &st);
		seq_printf(seq, " 0x%x %llu %llu", READ_ONCE(svc->flags),
			   st.conns, st.rejects);
		kpx_name_show(seq, svc);
		seq_putc(seq, '\n');
		return 0;
	}
	set = rcu_dereference(svc->bset);
	i = it->line - 1;
	if (!set || i >= set->count)
		return SEQ_SKIP;	/* the set shrank since ->next() */
	seq_puts(seq, "  -> ");
	put_addr(seq, svc->key.family, &set->be[i]->addr, set->be[i]->port);
	seq_printf(seq, " weight %u conns %llu\n", kpx_bset_weight(set, i),
		   kpx_be_stats_conns(set->be[i]->conns));
	return 0;
}

static const struct seq_operations services_ops = {
	.start = services_start,
	.next = services_next,
	.stop = services_stop,
	.show = services_show,
};

int kpx_proc_init(struct net *net)
{
	struct kpx_net *kn = kpx_net(net);

	kn->proc_dir = proc_net_mkdir(net, "kpx", net->proc_net);
	if (!kn->proc_dir)
		return -ENOMEM;
	if (!proc_create_net("services", 0444, kn->proc_dir, &services_ops,
			     sizeof(struct services_iter))) {
		remove_proc_subtree("kpx", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

void kpx_proc_exit(struct net *net)
{
	remove_proc_subtree("kpx", net->proc_net);
}
