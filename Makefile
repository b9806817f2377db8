# SPDX-License-Identifier: GPL-2.0-only
#
# kpx: build, test and demo entry points.
#   make            module (against KVER's headers), agent, kpxctl, test tools
#   make check      everything below: host unit tests, DKMS build, VM suite
#   make demo       the walking skeleton end to end in a VM
# Every target first installs missing Debian packages (packaging/install-deps.sh).

KVER ?= $(shell ls -d /lib/modules/6.1.*/build 2>/dev/null | sed 's|/lib/modules/||;s|/build||' | sort -V | tail -n 1)
KERNELDIR ?= /lib/modules/$(KVER)/build
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf 2>/dev/null)
export KVER KERNELDIR

all: module agent tools

deps:
	@./packaging/install-deps.sh

module: deps
	$(MAKE) -C kmod KERNELDIR=$(KERNELDIR)

agent: deps
	$(MAKE) -C agent KPX_VERSION=$(VERSION)

tools: deps
	$(MAKE) -C selftests

# Style: clang-format on the agent's listed files, checkpatch on kmod/ and
# uapi/ (scripts/style.sh); # sparse (C=2) over kmod/ against each installed kernel's headers, in a
# scratch copy (scripts/sparse.sh); any warning fails it.
sparse: deps
	./scripts/sparse.sh

style-diff: clang-format on the agent lines
# changed since BASE.
BASE ?= main
style: deps
	./scripts/style.sh

style-diff:
	@out=$$(git clang-format --diff --extensions c,h $(BASE) -- agent); \
	case "$$out" in ""|*"no modified files"*|*"did not modify"*) echo "style-diff: clean";; \
	*) echo "$$out"; exit 1;; esac

# Host-side tests: the agent's layer rule (agent/README.md), its pure core
# and the test API server.
unit: agent
	$(MAKE) -C agent check-layers
	$(MAKE) -C agent test
	python3 ./selftests/apiserver/test_apiserver.py
	$(MAKE) -C agent itest
	$(MAKE) -C agent fuzz
	$(MAKE) -C kmod/tests/host test

# KUnit suites (kmod/tests: kpx_kunit.ko, the pure core; kpx_kunit_full.ko,
# the frontend table and netlink policies; both separate from kpx.ko) on the
# debug test kernel (KASAN, lockdep, PROVE_RCU, kmemleak, panic_on_warn),
# built once from Debian's linux-source-6.1 and cached
# (selftests/qemu/debug-kernel.sh), then a kmemleak scan.
kunit: deps
	./kmod/tests/run-kunit.sh

# The whole VM suite on the debug kernel, then a kmemleak scan; any report
# fails it (selftests/qemu/check-debug.sh).  Too slow for "make check" (see
# README, Tests); check runs vm-check-debug-module, the module-level tests
# (those that do not run kpx-agent), on it instead.
vm-check-debug: all
	./selftests/qemu/check-debug.sh

vm-check-debug-module: all
	./selftests/qemu/check-debug.sh --module

# Host benchmarks of the pure core: Maglev build, scheduler decisions, affinity.
bench-core:
	$(MAKE) -C bench/core run

# DKMS build of the module against every installed kernel's headers (Debian
# 12's 6.1 and its 6.12 from bookworm-security), in a scratch tree (nothing is
# installed on the host).  Fails unless both series are there.
DKMS_KVERS ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sed 's|/lib/modules/||;s|/build||' | sort -V)

dkms-build: deps
	@case " $(DKMS_KVERS)" in *" 6.1."*" 6.12."*) ;; \
	 *) echo "dkms-build: need 6.1 and 6.12 headers, have: $(DKMS_KVERS)" >&2; exit 1;; esac
	@for k in $(DKMS_KVERS); do ./packaging/dkms-build.sh $$k || exit 1; done

# Copies exactly the module's sources to /usr/src/kpx-$(VERSION) for DKMS.
dkms-install:
	mkdir -p $(DESTDIR)/usr/src/kpx-$(VERSION)
	cp --parents $$(ls $$(cat packaging/dkms-files) | grep -v "\.mod\.c$$") $(DESTDIR)/usr/src/kpx-$(VERSION)/

# The kernel suite, in QEMU (TCG), on Debian's kernel $(KVER).
vm-check: all
	./selftests/qemu/check.sh

# The suite once per fallback proxy mode (issue 6), one VM boot each
# (selftests/run_guest.sh: the agent-driven tests run, the module's own
# skip); TAP in selftests/qemu/.cache/last-tap-mode-MODE.txt.
KPX_MODES ?= nftables iptables ipvs
# The VM tests' long steps (KPX_LONG=1): kpx_agent_faults' API replies that
# do not follow the API, against the real module.
vm-check-long: all
	KPX_LONG=1 KPX_TESTS=kpx_agent_faults KPX_CHECK_TAG=long ./selftests/qemu/check.sh

vm-check-modes: all
	@rc=0; for m in $(KPX_MODES); do \
		KPX_PROXY_MODE=$$m KPX_CHECK_TAG=mode-$$m ./selftests/qemu/check.sh || rc=1; \
	done; exit $$rc

# kube-proxy's own packet-flow tables (testdata/upstream, kpx_upstream) in
# every proxy mode, all of them (KPX_UPSTREAM=1): make check runs the
# quick part in kpx mode.  One VM boot per mode.
vm-check-upstream: all
	@rc=0; for m in kpx $(KPX_MODES); do \
		KPX_UPSTREAM=1 KPX_PROXY_MODE=$$m KPX_TESTS=kpx_upstream KPX_CHECK_TAG=upstream-$$m \
			./selftests/qemu/check.sh || rc=1; \
	done; exit $$rc

# Debian packages kpx-dkms and kpx-agent (dpkg-buildpackage in a scratch copy).
DEBDIR ?= /var/tmp/kpx-debs
packages: deps
	./packaging/build-debs.sh $(DEBDIR)

# Kubernetes manifests, then the packages installed into a fresh Debian 12
# chroot (debootstrap, cached in /var/cache/kpx-packaging).
test-packaging: deps
	./packaging/test-manifests.py
	./packaging/test-debs.sh

# The ClusterIP suite on Debian 12's second kernel series (6.12).
KVER_6_12 ?= $(shell ls -d /lib/modules/6.12.*/build 2>/dev/null | sed 's|/lib/modules/||;s|/build||' | sort -V | tail -n 1)
vm-check-6.12: all
	./selftests/qemu/check-kernel.sh $(KVER_6_12) kpx_clusterip

# What CI runs (.ci/run), within its 90-minute budget on a fresh 2-core machine.
check: style sparse unit dkms-build test-packaging vm-check vm-check-6.12 kunit

# The genetlink fuzzer for long (selftests/tools/kpx_fuzz.c): 15 minutes
# in the VM suite on Debian's kernel (kpx_fuzz), then 10 minutes on the
# debug kernel (KASAN, lockdep, kmemleak) after the fail-nth run of every
# SET path (kmod/tests/run-kunit.sh; about 1,150 faults, 10 minutes of
# guest time, 40 on a host shared with other VMs: hence the VM's timeout;
# KPX_FAILNTH_PATH=TEXT runs the paths named with TEXT only).  make check
# runs the fuzzer briefly.
KPX_FUZZ_LONG ?= 900
fuzz-long: all
	KPX_FUZZ_SECONDS=$(KPX_FUZZ_LONG) KPX_TEST_TIMEOUT=$$(($(KPX_FUZZ_LONG) + 600)) \
		KPX_VM_TIMEOUT=$$(($(KPX_FUZZ_LONG) + 1200)) KPX_CHECK_TAG=fuzz-long \
		KPX_TESTS=kpx_fuzz ./selftests/qemu/check.sh
	KPX_FUZZ_SECONDS=600 KPX_FUZZ_FAILNTH=1 KPX_VM_TIMEOUT=5400 KPX_CHECK_TAG=fuzz-long \
		./kmod/tests/run-kunit.sh

# check, plus the suite in each fallback proxy mode, the module's tests on
# the debug kernel (KASAN, lockdep, kmemleak) and the long fuzzer runs:
# about an hour and a half more here.
check-all: check vm-check-long vm-check-modes vm-check-upstream vm-check-debug-module fuzz-long

# Agent CPU time and peak RSS: initial sync of 10k Services, 1000 changes.
bench-agent: agent
	./bench/agent/run.sh

# Agent time of one endpoint change at 10,000 Services x 100
# endpoints (p50/p99 over 100 changes), in process, fake data plane.
bench-agent-sync: agent
	$(MAKE) -C bench/agent sync

# /healthz and endpoint change latency while /metrics is scraped in a loop,
# 10,000 Services x 100 endpoints, in process (bench/agent/bench_scrape.c).
bench-agent-scrape: agent
	$(MAKE) -C bench/agent scrape

# Maglev memory and SET time at 50,000 mh frontends in the VM: Slab +
# VmallocUsed before and after, per-SET wall time (bench/mh/run.sh; results
# in bench/results/).  Not part of check or check-all: run by hand.
bench-mh: deps
	./bench/mh/run.sh

# Conntrack cleanup cost in the VM: a sync of 1,000 UDP frontends against
# 500,000 conntrack entries, walks counted (bench/ct/run.sh [REV...]; results
# in bench/results/).  Not part of check or check-all: run by hand.
bench-ct: deps
	./bench/ct/run.sh

# The hostile SETs' reply time (106,000 empty lists, too many lists, the
# largest valid SET, one backend too many) in the VM (bench/genl/run.sh
# [REV...]; results in bench/results/).  Not part of check or check-all.
bench-genl: deps
	./bench/genl/run.sh

# ClientIP affinity's per-connection cost, 65,536 IPv6 clients colliding
# under the former fixed-seed hash against random ones, in the VM
# (bench/aff/run.sh [REV...]; results in bench/results/).  Not part of
# check or check-all.
bench-aff: deps
	./bench/aff/run.sh

# Side-by-side VM benchmark (issue 7): kpx, the fallback modes and the
# no-proxy floor; results in bench/results/ (bench/run.sh).  bench-quick:
# fewer N, shorter runs, under 10 minutes.
bench: deps
	./bench/run.sh

bench-quick: deps
	./bench/run.sh --quick

.PHONY: bench bench-quick

demo: all
	./selftests/qemu/run-vm.sh -- /bin/bash $(CURDIR)/selftests/demo/demo.sh

clean:
	$(MAKE) -C kmod clean
	$(MAKE) -C agent clean
	$(MAKE) -C selftests clean

.PHONY: all deps module agent tools style sparse style-diff unit dkms-build dkms-install packages test-packaging \
	vm-check vm-check-6.12 vm-check-long vm-check-modes vm-check-upstream vm-check-debug vm-check-debug-module kunit fuzz-long check check-all demo bench-agent bench-agent-sync bench-agent-scrape bench-core bench-mh bench-ct bench-genl bench-aff clean
