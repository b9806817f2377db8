/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The build's identity, written by tools/buildinfo.sh into the generated
 * base/buildinfo.c at each make (rewritten only when it changes): kpx's
 * version (dkms.conf's PACKAGE_VERSION, or KPX_VERSION given to make), the
 * git commit it was built from ("" when unknown), the tree's state then
 * ("clean", "dirty", "archive": not from a checkout) and the build date
 * (RFC 3339, UTC).  kubernetes_build_info and --version report them.
 */
#ifndef KPX_BASE_BUILDINFO_H
#define KPX_BASE_BUILDINFO_H

extern const char kpx_build_version[];
extern const char kpx_build_git_commit[];
extern const char kpx_build_git_tree_state[];
extern const char kpx_build_date[];

#endif
