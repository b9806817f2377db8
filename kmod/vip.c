// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx ClusterIP address set.
 *
 * Every frontend with KPX_SVC_F_CLUSTER_IP holds one reference on an entry
 * for its (family, address) in the namespace's kpx_net.vips rhashtable.  On a
 * frontend miss the NAT hook asks whether the destination is such an
 * address: then the connection went to a port or protocol the Service does
 * not define, and is refused at once, as kube-proxy's nftables mode does
 * (its reject of undefined ClusterIP ports).  Readers take
 * rcu_read_lock(); writers hold kpx_net.lock.
 */
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/socket.h>

#include "vip.h"

/* One ClusterIP address; key.protocol and key.port are always zero. */
struct kpx_vip {
	struct rhash_head node;
	struct kpx_key key;
	u32 refs;		/* frontends with the flag; under kn->lock */
	struct rcu_head rcu;
};

static const struct rhashtable_params vip_params = {
	.key_len = sizeof(struct kpx_key),
	.key_offset = offsetof(struct kpx_vip, key),
	.head_offset = offsetof(struct kpx_vip, node),
	.automatic_shrinking = true,
};

/* The address part of @key, with protocol and port zero. */
static void vip_key(struct kpx_key *vk, const struct kpx_key *key)
{
	memset(vk, 0, sizeof(*vk));
	vk->family = key->family;
	vk->addr = key->addr;
}

int kpx_vip_table_init(struct kpx_net *kn)
{
	return rhashtable_init(&kn->vips, &vip_params);
}

static void vip_free(void *ptr, void *arg)
{
	kfree(ptr);
}

/**
 * kpx_vip_table_destroy - free the set at namespace exit
 * @kn: the namespace's state; no reader or writer is left
 */
void kpx_vip_table_destroy(struct kpx_net *kn)
{
	rhashtable_free_and_destroy(&kn->vips, vip_free, NULL);
}

/**
 * kpx_vip_get - take a reference on the ClusterIP address of a frontend
 * @kn: the namespace's state; kn->lock held
 * @key: the frontend's key (its protocol and port are ignored)
 *
 * Return: 0, -ENOMEM or an rhashtable insertion error; on error nothing
 * changed.
 */
int kpx_vip_get(struct kpx_net *kn, const struct kpx_key *key)
{
	struct kpx_vip *v;
	struct kpx_key vk;
	int err;

	lockdep_assert_held(&kn->lock);
	vip_key(&vk, key);
	v = rhashtable_lookup_fast(&kn->vips, &vk, vip_params);
	if (v) {
		v->refs++;
		return 0;
	}
	v = kzalloc(sizeof(*v), GFP_KERNEL_ACCOUNT);
	if (!v)
		return -ENOMEM;
	v->key = vk;
	v->refs = 1;
	err = rhashtable_insert_fast(&kn->vips, &v->node, vip_params);
	if (err)
		kfree(v);
	return err;
}

/**
 * kpx_vip_put - drop a reference taken by kpx_vip_get()
 * @kn: the namespace's state; kn->lock held
 * @key: the same frontend key
 *
 * The last reference removes the address; it is freed after a grace period.
 */
void kpx_vip_put(struct kpx_net *kn, const struct kpx_key *key)
{
	struct kpx_vip *v;
	struct kpx_key vk;

	lockdep_assert_held(&kn->lock);
	vip_key(&vk, key);
	v = rhashtable_lookup_fast(&kn->vips, &vk, vip_params);
	if (WARN_ON_ONCE(!v))
		return;
	if (--v->refs)
		return;
	rhashtable_remove_fast(&kn->vips, &v->node, vip_params);
	kfree_rcu(v, rcu);
}

/**
 * kpx_vip_is_cluster_ip - is @addr the address of a ClusterIP frontend
 * @kn: the namespace's state
 * @family: AF_INET or AF_INET6
 * @addr: network order, unused bytes zero (as in a struct kpx_key)
 *
 * Call under rcu_read_lock() (netfilter hooks do).
 *
 * Return: true if some KPX_SVC_F_CLUSTER_IP frontend has this address.
 */
bool kpx_vip_is_cluster_ip(struct kpx_net *kn, u8 family,
			   const union kpx_addr *addr)
{
	struct kpx_key vk;

	memset(&vk, 0, sizeof(vk));
	vk.family = family;
	vk.addr = *addr;
	return !!rhashtable_lookup(&kn->vips, &vk, vip_params);
}
