# SPDX-License-Identifier: GPL-2.0-only
#
# kpx: build, test and demo entry points.
#   make            module (against KVER's headers), agent, kpxctl, test tools
#   make check      everything below: host unit tests, DKMS build, VM suite
#   make demo       the walking skeleton end to end in a VM
# Every target first installs missing Debian packages (packaging/install-deps.sh).

KVER ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sed 's|/lib/modules/||;s|/build||' | sort -V | tail -n 1)
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

# Host-side tests: the agent's pure core and the test API server.
unit: agent
	$(MAKE) -C agent test
	python3 ./selftests/apiserver/test_apiserver.py
	./agent/tests/agent-apiserver.sh

# DKMS build of the module against the installed headers, in a scratch tree
# (nothing is installed on the host).
dkms-build: deps
	./packaging/dkms-build.sh $(KVER)

# Copies exactly the module's sources to /usr/src/kpx-$(VERSION) for DKMS.
dkms-install:
	mkdir -p $(DESTDIR)/usr/src/kpx-$(VERSION)
	cp --parents $$(cat packaging/dkms-files) $(DESTDIR)/usr/src/kpx-$(VERSION)/

# The kernel suite, in QEMU (TCG), on Debian's kernel $(KVER).
vm-check: all
	./selftests/qemu/check.sh

check: unit dkms-build vm-check

demo: all
	./selftests/qemu/run-vm.sh -- /bin/sh $(CURDIR)/selftests/demo/demo.sh

clean:
	$(MAKE) -C kmod clean
	$(MAKE) -C agent clean
	$(MAKE) -C selftests clean

.PHONY: all deps module agent tools unit dkms-build dkms-install vm-check check demo clean
