/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef KPX_CORE_H
#define KPX_CORE_H

int kpx_core_init(void);
void kpx_core_exit(void);

#endif
