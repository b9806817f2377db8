// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx-agent: watches Services and EndpointSlices and programs the kpx
 * module.  Flags follow kube-proxy's names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "config/config.h"
#include "config/ctsysctl.h"
#include "dp/dataplane.h"
#include "k8s/decode.h"
#include "base/ctstat.h"
#include "base/duration.h"
#include "http/healthcheck.h"
#include "http/healthz.h"
#include "k8s/k8s.h"
#include "config/kubeconfig.h"
#include "base/log.h"
#include "http/metrics.h"
#include "http/metricsd.h"
#include "host/addrs.h"
#include "dp/ipvs/ipvs_rules.h"
#include "model/model.h"
#include "model/nodewait.h"
#include "sync/sync.h"
#include "base/buildinfo.h"

/* Interface addresses handed to the model at most. */
#define NP_LOCAL_MAX 1024


/* The conntrack statistics' check (ctstat.h): how often, and the log's interval. */
#define CT_CHECK_MS 10000
#define CT_FULL_LOG_MS 60000
#define NF_CONNTRACK_MAX "/proc/sys/net/netfilter/nf_conntrack_max"

static int usage_error(const char *msg)
{
	fprintf(stderr, "kpx-agent: %s\nTry 'kpx-agent --help'.\n", msg);
	return 2;
}

/* Fills @kc from the configuration; prints the reason and returns false on error. */
static bool load_kubeconfig(const struct kpx_config *o, struct kpx_kubeconfig *kc)
{
	char err[512];
	int r;

	if (o->kubeconfig)
		r = kpx_kubeconfig_load(o->kubeconfig, kc, err, sizeof(err));
	else if (o->master)
		r = (memset(kc, 0, sizeof(*kc)), 0);
	else
		r = kpx_kubeconfig_incluster(KPX_SA_DIR, kc, err, sizeof(err));
	if (r) {
		if (r == -ENOENT && !o->kubeconfig)
			fprintf(stderr, "kpx-agent: no API server: give --kubeconfig or --master, or run in a cluster\n");
		else
			fprintf(stderr, "kpx-agent: %s\n", err);
		return false;
	}
	if (o->master) {
		free(kc->server);
		if (kpx_kubeconfig_server(o->master, &kc->server, err, sizeof(err))) {
			fprintf(stderr, "kpx-agent: --master: %s\n", err);
			return false;
		}
	}
	return true;
}

static int signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * Ready to sync: never before the first lists, the own Node's included
 * (without it NodePort frontends a previous agent left would be deleted
 * and re-added; see model.h).
 */
static bool lists_done(const struct kpx_k8s *k)
{
	return kpx_k8s_synced(k, KPX_KIND_SERVICE) &&
	       kpx_k8s_synced(k, KPX_KIND_ENDPOINTSLICE) &&
	       kpx_k8s_synced(k, KPX_KIND_NODE);
}

/* The health and metrics servers; a bind failure is logged, fatal only with bindAddressHardFail (as kube-proxy). */
struct servers {
	struct kpx_healthz hz;
	struct kpx_metricsd md;
	struct kpx_httpd *hzd, *mdd;
};

/* /statusz's report (metricsd.h): the syncer's, against the module read. */
static int status_report(void *ctx, const struct kpx_service *dp, size_t ndp, bool have_dp,
			 struct kpx_status *st)
{
	return kpx_sync_status(ctx, dp, ndp, have_dp, st);
}

/*
 * Started once the own Node is known; then, as kube-proxy, a Node Event
 * "Starting", or a Warning FailedToStartProxierHealthcheck /
 * FailedToStartMetricServer with the error for a server that cannot bind.
 * -1 when one could not and bindAddressHardFail makes that fatal, else 0.
 */
static int servers_start(struct servers *sv, const struct kpx_config *o,
			 struct kpx_metrics *m, const char *mode, struct kpx_k8s *k,
			 struct kpx_sync *sync)
{
	char err[256];

	sv->hz = (struct kpx_healthz){ .m = m, .timeout_ms = o->health_timeout_ms };
	sv->md = (struct kpx_metricsd){ .m = m, .dry_run = o->dry_run, .mode = mode,
					.per_backend = o->metrics_per_backend, .config = o,
					.status = status_report, .status_ctx = sync };
	if (o->healthz_bind[0]) {
		sv->hzd = kpx_healthz_start(o->healthz_bind, &sv->hz, err, sizeof(err));
		if (sv->hzd)
			kpx_info("main", "serving /healthz and /livez on %s", o->healthz_bind);
		else
			kpx_err("main", "healthz server: %s", err);
		if (!sv->hzd)
			kpx_k8s_event(k, "Warning", "FailedToStartProxierHealthcheck",
				      "StartKubeProxy", err);
	}
	if (o->metrics_bind[0]) {
		sv->mdd = kpx_metricsd_start(o->metrics_bind, &sv->md, err, sizeof(err));
		if (sv->mdd)
			kpx_info("main", "serving /metrics on %s", o->metrics_bind);
		else
			kpx_err("main", "metrics server: %s", err);
		if (!sv->mdd)
			kpx_k8s_event(k, "Warning", "FailedToStartMetricServer",
				      "StartKubeProxy", err);
	}
	if (o->bind_hard_fail && ((o->healthz_bind[0] && !sv->hzd) ||
				  (o->metrics_bind[0] && !sv->mdd))) {
		kpx_err("main", "bindAddressHardFail is set and a server could not listen: exiting");
		return -1;
	}
	kpx_k8s_event(k, "Normal", "Starting", "StartKubeProxy", NULL);
	return 0;
}

static void servers_stop(struct servers *sv)
{
	kpx_httpd_stop(sv->hzd);
	if (sv->mdd)
		kpx_metricsd_stop(sv->mdd, &sv->md);
}

/*
 * Localhost NodePorts (--nodeport-addresses holding 127.0.0.1) need
 * net.ipv4.conf.all.route_localnet=1, as kube-proxy's iptables mode sets
 * it; kpx.ko drops loopback destinations that arrive from outside.
 */
static void localnet_on(void)
{
	char err[512];

	if (kpx_sysctl_ensure("", "net/ipv4/conf/all/route_localnet", 1,
			      KPX_SYSCTL_TOLERANT, err, sizeof(err)) < 0)
		kpx_err("main", "localhost NodePorts: %s", err);
}

/*
 * The fallback modes' settings for the data plane: the masquerade mark of
 * the mode's masqueradeBit (nftables.*, else iptables.*), ipvs.strictARP
 * and the IPVS timeouts.
 */
static void dp_params(const struct kpx_config *o)
{
	struct kpx_dp_params p = {
		.masq_mark = 1U << (!strcmp(o->proxy_mode, "nftables") ? o->nft_masq_bit :
				    o->ipt_masq_bit),
		.strict_arp = o->ipvs_strict_arp,
		.ipvs_tcp_s = (uint32_t)o->ipvs_tcp_s,
		.ipvs_tcpfin_s = (uint32_t)o->ipvs_tcpfin_s,
		.ipvs_udp_s = (uint32_t)o->ipvs_udp_s,
		.ipvs_exclude = o->ipvs_exclude,
		.n_ipvs_exclude = (size_t)o->n_ipvs_exclude,
	};

	kpx_dp_set_params(&p);
}

/*
 * --init-only: the node's set-up that needs privileges the agent does not
 * keep (writing /proc/sys, loading nf_conntrack and ip_vs), as kube-proxy
 * does at start-up: the conntrack sysctls and those of the proxy mode.  Run
 * before the agent, in the DaemonSet's privileged init container or the
 * unit's ExecStartPre=.  Every failure is an error (exit 1).
 */
static int init_only(const struct kpx_config *o)
{
	unsigned int flags = o->dry_run ? KPX_SYSCTL_DRY_RUN : 0;
	char err[512];
	int r, n;

	r = kpx_ct_apply(&o->conntrack, "", kpx_ct_ncpu(), flags, err, sizeof(err));
	if (r >= 0) {
		bool lo = !o->no_localhost_nodeports &&
			  kpx_cidrs_hold_localhost(o->nodeport_cidrs, o->n_nodeport_cidrs);

		n = r;
		r = kpx_mode_sysctls(o->proxy_mode, lo, "", flags, err,
				     sizeof(err));
	}
	if (r >= 0 && o->ipvs_strict_arp && !strcmp(o->proxy_mode, "ipvs")) {
		n += r;
		r = kpx_strict_arp_sysctls("", flags, err, sizeof(err));
	}
	if (r < 0) {
		fprintf(stderr, "kpx-agent: --init-only: %s\n", err);
		return 1;
	}
	kpx_info("main", "init-only: node set up for the %s mode (%d sysctls written)",
		 *o->proxy_mode ? o->proxy_mode : "kpx", n + r);
	return 0;
}

/*
 * The descriptor the event loop waits on: @sfd, or an epoll descriptor over
 * @sfd, the --config file's watch (*wfd), the interface address watch
 * (@afd, -1 without) and the data plane's event descriptor (@dfd, -1
 * without), readable when one of them is.
 */
static int events_fd(const struct kpx_config *o, int sfd, int *wfd, int afd, int dfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int efd;

	if (sfd < 0)
		return sfd;
	if (o->config_file && !o->once) {
		*wfd = kpx_config_watch_open(o->config_file);
		if (*wfd < 0) {
			kpx_err("main", "watching --config %s: %s", o->config_file,
				strerror(-*wfd));
			*wfd = -1;
			return -1;
		}
	}
	if (*wfd < 0 && afd < 0 && dfd < 0)
		return sfd;
	efd = epoll_create1(EPOLL_CLOEXEC);
	if (efd < 0 || epoll_ctl(efd, EPOLL_CTL_ADD, sfd, &ev) ||
	    (*wfd >= 0 && epoll_ctl(efd, EPOLL_CTL_ADD, *wfd, &ev)) ||
	    (afd >= 0 && epoll_ctl(efd, EPOLL_CTL_ADD, afd, &ev)) ||
	    (dfd >= 0 && epoll_ctl(efd, EPOLL_CTL_ADD, dfd, &ev))) {
		if (efd >= 0)
			close(efd);
		return -1;
	}
	return efd;
}

/*
 * The interface addresses into the model when they changed (or first):
 * --nodeport-addresses CIDRs select among them, and a changed NodePort
 * address set makes the next sync reprogram the NodePort frontends.
 */
static void local_addrs_update(struct kpx_addrs *a, struct kpx_model *model)
{
	static struct kpx_cidr v[NP_LOCAL_MAX];
	size_t n;
	int r = kpx_addrs_process(a);

	if (r <= 0)
		return;
	n = kpx_addrs_get(a, v, NP_LOCAL_MAX);
	if (n > NP_LOCAL_MAX) {
		kpx_warn("main", "%zu interface addresses: only the first %d are NodePort candidates",
			 n, NP_LOCAL_MAX);
		n = NP_LOCAL_MAX;
	}
	r = kpx_model_set_local_addrs(model, v, n);
	if (r > 0)
		kpx_info("main", "interface addresses changed (%zu): NodePort addresses resynced", n);
	else if (r < 0)
		kpx_err("main", "interface addresses: %s", strerror(-r));
}

static int run(const struct kpx_config *o, struct kpx_dp *dp,
	       const struct kpx_kubeconfig *kc)
{
	struct kpx_metrics *metrics = kpx_metrics_new();
	struct kpx_model *model = metrics ? kpx_model_new() : NULL;
	struct kpx_sync *sync = model ? kpx_sync_new(model, dp, o->min_sync_ms, o->sync_ms) : NULL;
	struct kpx_k8s *k = sync ? kpx_k8s_new(kc, o->hostname, model) : NULL;
	struct servers sv = { 0 };
	struct kpx_hc *hc = NULL;
	struct kpx_ctstat_check ctc = { 0 };
	int64_t ct_next = 0;
	struct kpx_nodewait nw;
	bool node_ready = false;
	int64_t ips_ms, cidrs_ms;
	struct kpx_addrs *addrs = NULL;
	int sfd = signal_fd(), status = 0, r;
	int dfd = dp && dp->ops->event_fd && !o->once ? dp->ops->event_fd(dp) : -1;
	int wfd = -1, efd;

	/* the host's addresses, for --nodeport-addresses CIDRs (not in a
	 * dry run: its output follows the API objects alone) */
	if (!o->dry_run) {
		addrs = kpx_addrs_open(!strcmp(o->proxy_mode, "ipvs") ?
				       KPX_IPVS_LINK : NULL, &r);
		if (!addrs)
			kpx_warn("main", "no interface address watch (%s): NodePort CIDRs select among the Node's addresses",
				 strerror(-r));
	}
	efd = events_fd(o, sfd, &wfd, addrs && !o->once ? kpx_addrs_fd(addrs) : -1, dfd);

	if (!k || sfd < 0 || efd < 0) {
		fprintf(stderr, "kpx-agent: setup failed: %s\n", strerror(errno));
		status = 1;
		goto out;
	}
	kpx_model_set_config(model, o);
	if (addrs)
		local_addrs_update(addrs, model);
	if (!o->dry_run)
		kpx_config_apply_oom_score_adj(o, NULL);	/* as kube-proxy, in every mode */
	if (dp && kpx_model_localhost_nodeports(model))
		localnet_on();
	if (!o->dry_run && !o->once) {
		hc = kpx_hc_new(NULL, 0);
		if (!hc) {
			fprintf(stderr, "kpx-agent: setup failed: %s\n", strerror(errno));
			status = 1;
			goto out;
		}
		kpx_sync_set_healthchecks(sync, hc, o->health_timeout_ms);
	}
	kpx_metrics_set_mode(metrics, o->proxy_mode);
	kpx_sync_set_metrics(sync, metrics);
	kpx_k8s_set_metrics(k, metrics);
	kpx_k8s_set_limits(k, o->kube_api_qps, o->kube_api_burst,
			   (int)(o->request_timeout_ms / 1000), (int)(o->watch_stall_ms / 1000));
	kpx_info("main", "kpx-agent %s starting: node %s, server %s, proxy mode %s%s",
		 kpx_build_version, o->hostname, kc->server, dp ? dp->ops->name : "none",
		 o->dry_run ? ", dry run" : "");
	if (kpx_nodewait_timeouts(getenv("KPX_TEST_NODE_WAIT_MS"), &ips_ms, &cidrs_ms))
		kpx_warn("main", "KPX_TEST_NODE_WAIT_MS is not \"IPS_MS,CIDRS_MS\": ignored");
	kpx_nodewait_init(&nw, o->hostname, o->detect_local == KPX_DETECT_LOCAL_NODE_CIDR,
			  ips_ms, cidrs_ms);
	for (;;) {
		int64_t now = kpx_now_ms(), wait = 1000;

		/* "conntrack table full", at most once per CT_FULL_LOG_MS */
		if (now >= ct_next) {
			kpx_ctstat_check(&ctc, KPX_CTSTAT_PATH, NF_CONNTRACK_MAX, now,
					 CT_FULL_LOG_MS);
			ct_next = now + CT_CHECK_MS;
		}

		/*
		 * As kube-proxy: the own Node first (nodewait.h), then the
		 * health and metrics servers, then the first sync.
		 */
		if (!node_ready && kpx_k8s_synced(k, KPX_KIND_NODE)) {
			size_t naddrs, ncidrs;
			bool exists = kpx_model_own_node(model, &naddrs, &ncidrs);

			r = kpx_nodewait_step(&nw, exists, naddrs, ncidrs, now);
			if (r == KPX_NODEWAIT_FAILED) {
				status = 1;
				break;
			}
			if (r == KPX_NODEWAIT_DONE) {
				node_ready = true;
				if (!o->once &&
				    servers_start(&sv, o, metrics, dp ? dp->ops->name : NULL, k, sync)) {
					status = 1;
					break;
				}
			}
		}
		if (node_ready && lists_done(k)) {
			int64_t due = kpx_sync_due(sync);

			if (due <= now) {
				r = kpx_sync_run(sync);
				if (o->once) {
					status = r ? 1 : 0;
					break;
				}
				due = kpx_sync_due(sync);
			}
			wait = due - now > 0 ? due - now : 0;
			if (wait > CT_CHECK_MS)
				wait = CT_CHECK_MS;
		}
		r = kpx_k8s_poll(k, efd, (int)wait);
		if (r < 0) {
			kpx_err("main", "event loop: %s", strerror(-r));
			status = 1;
			break;
		}
		if (r > 0) {
			struct signalfd_siginfo si;

			if (addrs)
				local_addrs_update(addrs, model);
			/* the module loaded again: program it at once */
			if (dfd >= 0 && dp->ops->events(dp) > 0)
				kpx_sync_dp_replaced(sync);

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				kpx_info("main", "%s: exiting, module state left in place",
					 strsignal((int)si.ssi_signo));
				break;
			}
			if (wfd >= 0 && kpx_config_watch_changed(wfd)) {
				/* as kube-proxy: exit, to be restarted with the new file */
				kpx_err("main", "content of the proxy server's configuration file "
					"%s was updated: exiting, module state left in place",
					o->config_file);
				status = 1;
				break;
			}
		}
	}
out:
	servers_stop(&sv);
	kpx_hc_free(hc);
	if (efd >= 0 && efd != sfd)
		close(efd);
	if (wfd >= 0)
		close(wfd);
	if (sfd >= 0)
		close(sfd);
	kpx_addrs_free(addrs);
	kpx_k8s_free(k);
	kpx_sync_free(sync);
	kpx_model_free(model);
	kpx_metrics_free(metrics);
	return status;
}

/*
 * --cleanup: as kube-proxy --cleanup, removes what every proxy mode may have
 * left on the node (a mode that cannot open here has nothing to remove).
 */
static int cleanup(const struct kpx_config *o)
{
	char why[512];
	int status = 0, r;
	size_t i;

	for (i = 0; kpx_dp_modes[i]; i++) {
		const struct kpx_dp_ops *ops = kpx_dp_modes[i];
		struct kpx_dp *dp;

		if (o->dry_run) {
			kpx_info("main", "dry run: cleanup would remove the %s mode's state", ops->name);
			continue;
		}
		r = ops->open(&dp, KPX_DP_OPEN_CLEANUP, why, sizeof(why));
		if (r) {
			kpx_info("main", "cleanup: %s: nothing to remove (%s)", ops->name, why);
			continue;
		}
		dp->ops = ops;
		r = ops->cleanup(dp);
		if (r) {
			fprintf(stderr, "kpx-agent: cleanup: %s: %s%s%s\n", ops->name, strerror(-r),
				*kpx_dp_errmsg(dp) ? ": " : "", kpx_dp_errmsg(dp));
			status = 1;
		} else {
			kpx_info("main", "cleanup: removed the %s mode's state", ops->name);
		}
		ops->close(dp);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct kpx_kubeconfig kc;
	struct kpx_config o;
	struct kpx_dp *dp = NULL;
	char err[512];
	int r;

	/*
	 * json-c builds and frees a tree of small objects per list page and
	 * per event; with glibc's fastbins a third of the initial sync went to
	 * malloc_consolidate() (perf, bench/agent: 10k Services, 0.9 -> 0.7 s).
	 */
	mallopt(M_MXFAST, 0);
	r = kpx_config_parse(&o, argc, argv, err, sizeof(err));
	if (r == 1 || r == 2) {
		if (r == 2)
			printf("kpx-agent %s\n", kpx_build_version);
		kpx_config_free(&o);
		return 0;
	}
	if (r) {
		kpx_config_free(&o);
		return usage_error(err);
	}
	kpx_log_verbosity = o.verbosity;
	if (o.n_ignored)
		kpx_info("main", "%u kube-proxy settings given have no effect in kpx (logged above)",
			 o.n_ignored);
	if (o.cleanup || o.init_only) {
		r = o.cleanup ? cleanup(&o) : init_only(&o);
		kpx_config_free(&o);
		return r;
	}
	dp_params(&o);
	if (!o.dry_run) {
		r = kpx_dp_open(o.proxy_mode, &dp, err, sizeof(err));
		if (r) {
			fprintf(stderr, "kpx-agent: %s\n", err);
			kpx_config_free(&o);
			return 1;
		}
	}
	kpx_config_mode_notes(&o, dp ? dp->ops->name : *o.proxy_mode ? o.proxy_mode : "kpx");
	/* as kube-proxy at start: the other modes' leftovers, kube-proxy's too */
	if (dp)
		kpx_dp_cleanup_leftovers(kpx_dp_modes, dp->ops->name);
	/*
	 * kube-proxy's setupConntrack(): after the proxier, before the first
	 * sync.  A read-only /proc/sys (a container's, the unit's
	 * ProtectKernelTunables=) is checked, not written: --init-only has
	 * set it up.
	 */
	if (kpx_sysctl_readonly(""))
		kpx_info("main", "/proc/sys is read-only: node sysctls are checked, not set (kpx-agent --init-only sets them)");
	r = kpx_ct_apply(&o.conntrack, "", kpx_ct_ncpu(),
			 o.dry_run ? KPX_SYSCTL_DRY_RUN : KPX_SYSCTL_TOLERANT, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "kpx-agent: %s\n", err);
		if (dp)
			dp->ops->close(dp);
		kpx_config_free(&o);
		return 1;
	}
	if (!load_kubeconfig(&o, &kc)) {
		if (dp)
			dp->ops->close(dp);
		kpx_config_free(&o);
		return 1;
	}
	r = run(&o, dp, &kc);
	kpx_kubeconfig_free(&kc);
	if (dp)
		dp->ops->close(dp);
	kpx_config_free(&o);
	return r;
}
