/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpxctl's subcommands (one file each: cmd_list.c, cmd_set.c for set, del
 * and flush, cmd_stats.c, cmd_config.c, cmd_flows.c with flows.c,
 * cmd_status.c, cmd_explain.c) and the helpers they share (kpxctl.c).
 * The module is reached through dp/kpx/nl.h only.
 */
#ifndef KPX_KPXCTL_H
#define KPX_KPXCTL_H

#include <stddef.h>
#include <json-c/json.h>

#include "base/cidr.h"
#include "dp/kpx/nl.h"

/* Exit status of a usage error; a runtime error is 1. */
#define EXIT_USAGE 2

struct cmd {
	const char *name;
	int (*fn)(const struct cmd *cmd, int argc, char **argv);
	const char *usage;	/* after "kpxctl " */
	const char *help;
};

/* "kpxctl: <message>" and the command's usage on stderr; EXIT_USAGE. */
int usage_error(const struct cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "kpxctl: <what>: <strerror>[: <kernel extack msg>]"; returns 1. */
int runtime_error(struct kpx_nl *nl, const char *what, int err);
/* kpx_nl_open() with its failure explained; 0 or 1. */
int open_nl(struct kpx_nl **nl);
/*
 * Ends the request(s) on @nl: closes it, after runtime_error() when @err
 * (a negative errno) is not 0.  Returns the exit status: 0, or 1 on @err.
 */
int close_nl(struct kpx_nl *nl, const char *what, int err);
/* Parses "[--json]" for list and stats: 1, 0, or -1 on a usage error. */
int parse_json_flag(const struct cmd *cmd, int argc, char **argv);
/* A CIDR list as a JSON array of "ADDR/LEN" strings. */
struct json_object *cidrs_json(const struct kpx_cidr *v, size_t n);
/* @o on one line of stdout. */
void print_json(struct json_object *o);

int cmd_list(const struct cmd *cmd, int argc, char **argv);
int cmd_set(const struct cmd *cmd, int argc, char **argv);
int cmd_del(const struct cmd *cmd, int argc, char **argv);
int cmd_flush(const struct cmd *cmd, int argc, char **argv);
int cmd_stats(const struct cmd *cmd, int argc, char **argv);
int cmd_config(const struct cmd *cmd, int argc, char **argv);
int cmd_flows(const struct cmd *cmd, int argc, char **argv);
int cmd_status(const struct cmd *cmd, int argc, char **argv);
int cmd_explain(const struct cmd *cmd, int argc, char **argv);

#endif
