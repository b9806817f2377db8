// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic netlink controller's notifications (family "nlctrl", group
 * "notify"): CTRL_CMD_NEWFAMILY and CTRL_CMD_DELFAMILY of the family "kpx",
 * sent when the module is loaded and unloaded (nl.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/kpx.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "dp/kpx/nl.h"
#include "dp/kpx/nl_priv.h"

struct kpx_nl_notify {
	struct nl_sock *sk;
	int events; /* KPX_NL_FAMILY_* seen by the current read */
};

static int on_msg(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct kpx_nl_notify *n = arg;
	struct genlmsghdr *g;

	if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, NULL) < 0 ||
	    !tb[CTRL_ATTR_FAMILY_NAME] ||
	    strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]), KPX_GENL_NAME))
		return NL_OK;
	g = nlmsg_data(nlh);
	if (g->cmd == CTRL_CMD_NEWFAMILY)
		n->events |= KPX_NL_FAMILY_NEW;
	else if (g->cmd == CTRL_CMD_DELFAMILY)
		n->events |= KPX_NL_FAMILY_DEL;
	return NL_OK;
}

int kpx_nl_notify_open(struct kpx_nl_notify **out)
{
	struct kpx_nl_notify *n = calloc(1, sizeof(*n));
	int ret;

	if (!n)
		return -ENOMEM;
	n->sk = nl_socket_alloc();
	if (!n->sk) {
		free(n);
		return -ENOMEM;
	}
	ret = genl_connect(n->sk);
	if (ret >= 0)
		ret = genl_ctrl_resolve_grp(n->sk, "nlctrl", "notify");
	if (ret >= 0)
		ret = nl_socket_add_membership(n->sk, ret);
	if (ret >= 0)
		ret = nl_socket_set_nonblocking(n->sk);
	if (ret < 0) {
		ret = kpx_genl_errno(ret);
		nl_socket_free(n->sk);
		free(n);
		return ret;
	}
	nl_socket_disable_seq_check(n->sk);
	nl_socket_modify_cb(n->sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, n);
	*out = n;
	return 0;
}

void kpx_nl_notify_close(struct kpx_nl_notify *n)
{
	if (!n)
		return;
	nl_socket_free(n->sk);
	free(n);
}

int kpx_nl_notify_fd(const struct kpx_nl_notify *n)
{
	return nl_socket_get_fd(n->sk);
}

int kpx_nl_notify_read(struct kpx_nl_notify *n)
{
	int r;

	n->events = 0;
	for (;;) {
		r = nl_recvmsgs_default(n->sk);
		if (r >= 0)
			continue;
		if (r != -NLE_AGAIN) /* overrun (ENOBUFS): events lost */
			n->events |= KPX_NL_FAMILY_NEW | KPX_NL_FAMILY_DEL;
		break;
	}
	return n->events;
}
