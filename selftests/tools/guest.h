/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Guard for the selftest tools: they send traffic to Service VIPs and pod
 * addresses, which may exist on real networks, so they only run inside the
 * kpx test VM, recognised by the marker file only its root has.
 */
#ifndef KPX_SELFTEST_GUEST_H
#define KPX_SELFTEST_GUEST_H

#define KPX_GUEST_MARKER "/etc/kpx-guest"

/* Exit status when refusing to run: the kselftest "skip" code. */
#define KPX_EXIT_NOT_GUEST 4

/*
 * kpx_require_guest() - exit(KPX_EXIT_NOT_GUEST) with a message on stderr
 * unless KPX_GUEST_MARKER exists.  @prog names the caller in the message.
 */
void kpx_require_guest(const char *prog);

#endif
