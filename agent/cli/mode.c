// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl's choice of the state to read (mode.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/kpxctl.h"
#include "cli/mode.h"
#include "dp/ipt/ipt_read.h"
#include "dp/ipvs/ipvs_read.h"
#include "dp/kpx/nl.h"
#include "dp/nft/nft_read.h"

typedef int (*reader_fn)(struct kpx_service **out, size_t *n, char *err,
			 size_t errlen);

/* The fallback modes, in the order of the choice. */
static const struct {
	const char *name;
	reader_fn read;
} fallbacks[] = {
	{ "nftables", kpx_nft_read },
	{ "ipvs", kpx_ipvs_read },
	{ "iptables", kpx_ipt_read },
};

#define NFALLBACKS (sizeof(fallbacks) / sizeof(fallbacks[0]))

int mode_flag(const struct cmd *cmd, int *argc, char **argv, const char **mode)
{
	*mode = NULL;
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--mode"))
			continue;
		if (i + 1 >= *argc)
			return usage_error(cmd, "--mode needs a value");
		*mode = argv[i + 1];
		if (strcmp(*mode, "kpx") && strcmp(*mode, "nftables") &&
		    strcmp(*mode, "iptables") && strcmp(*mode, "ipvs"))
			return usage_error(
				cmd,
				"--mode is kpx, nftables, iptables or ipvs, not '%s'",
				*mode);
		memmove(&argv[i], &argv[i + 2],
			(size_t)(*argc - i - 2) * sizeof(*argv));
		*argc -= 2;
		i--;
	}
	return 0;
}

/* The module's frontends; -ENOENT when it is not loaded. */
static int read_kpx(struct kpx_service **v, size_t *n, bool quiet)
{
	struct kpx_nl *nl;
	int err;

	if (quiet) {
		err = kpx_nl_open(&nl);
		if (err == -ENOENT)
			return err;
		if (err)
			return runtime_error(NULL, "netlink", err), err;
	} else if (open_nl(&nl)) {
		return -EIO;
	}
	err = kpx_nl_dump(nl, v, n);
	if (err) {
		runtime_error(nl, "dumping the module's frontends", err);
		err = -EIO;
	}
	kpx_nl_close(nl);
	return err;
}

static int read_fallback(size_t i, const char *what, struct kpx_service **v,
			 size_t *n, bool quiet)
{
	char err[512] = "";
	int r = fallbacks[i].read(v, n, err, sizeof(err));

	if (r && !(quiet && r == -ENOENT))
		fprintf(stderr, "kpxctl: %s: proxy mode %s: %s\n", what,
			fallbacks[i].name, *err ? err : strerror(-r));
	return r;
}

int mode_frontends(const char *mode, const char *what, struct kpx_service **v,
		   size_t *n, const char **used)
{
	struct kpx_service *kv = NULL;
	size_t kn = 0, i;
	bool have_kpx;
	int r;

	*v = NULL;
	*n = 0;
	*used = mode;
	if (mode && !strcmp(mode, "kpx"))
		return read_kpx(v, n, false) ? 1 : 0;
	for (i = 0; mode && i < NFALLBACKS; i++)
		if (!strcmp(mode, fallbacks[i].name))
			return read_fallback(i, what, v, n, false) ? 1 : 0;
	/* the module when it holds frontends, else a fallback mode's state */
	r = read_kpx(&kv, &kn, true);
	if (r && r != -ENOENT)
		return 1;
	have_kpx = !r;
	if (have_kpx && kn) {
		*v = kv;
		*n = kn;
		*used = "kpx";
		return 0;
	}
	for (i = 0; i < NFALLBACKS; i++) {
		r = read_fallback(i, what, v, n, true);
		if (r == -ENOENT)
			continue;
		kpx_services_free(kv, kn);
		if (r)
			return 1;
		*used = fallbacks[i].name;
		return 0;
	}
	if (!have_kpx) {
		fprintf(stderr,
			"kpxctl: %s: neither the kpx module (generic netlink family \"kpx\") "
			"nor the state of a fallback proxy mode (nftables table kpx, ipset "
			"KPX-IPVS-SVC, iptables chain KPX-SERVICES) is present\n",
			what);
		return 1;
	}
	*v = kv;
	*n = kn;
	*used = "kpx";
	return 0;
}
