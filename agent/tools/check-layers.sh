#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-layers.sh [AGENT_DIR]: the agent's include rule (README.md,
# "Layers").  A file in a folder includes headers of its own folder, of
# base/, and the public headers of the layer below that the table here
# names for its folder; nothing else of the agent.  Library headers are
# confined to the folders that wrap the library.  main.c, the top, wires
# every layer and may include any public header; tests/ and fuzz/ are not
# checked.  Prints each break as FILE:LINE and fails when there is one.

set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2

# The layer below: folder -> the headers of other folders (besides base/)
# it may include.
declare -A below=(
	[base]=""
	[config]=""
	[dp]=""
	[dp/kpx]="dp/dataplane.h dp/genl.h"
	[dp/nft]="dp/dataplane.h"
	[dp/ipt]="dp/dataplane.h"
	[dp/ipvs]="dp/dataplane.h dp/genl.h dp/ipt/ipt_rules.h config/ctsysctl.h"
	[model]="config/config.h"
	[http]="model/model.h config/config.h dp/kpx/nl.h"
	[sync]="model/model.h model/model_nolocal.h dp/dataplane.h http/metrics.h
		http/healthcheck.h"
	[k8s]="model/model.h model/api.h config/kubeconfig.h http/metrics.h"
	[cli]="dp/kpx/nl.h dp/nft/nft_read.h dp/ipt/ipt_read.h dp/ipvs/ipvs_read.h"
	[host]=""
)

# Library headers (the first path component of <...>) -> the folders that
# may include them.
declare -A libs=(
	[curl]="k8s config cli"
	[json-c]="base k8s cli config http dp/nft"
	[yaml.h]="config"
	[microhttpd.h]="http"
	[nftables]="dp/nft"
	[netlink]="dp dp/kpx dp/ipvs host"
	[libnetfilter_conntrack]="sync cli"
	[libipset]="dp/ipvs"
	[openssl]="config dp/ipt"
)

fail=0
checked=0
bad() {
	echo "$1: $2" >&2
	fail=1
}

in_list() {
	local x=$1 w
	shift
	for w in $*; do
		[ "$w" = "$x" ] && return 0
	done
	return 1
}

files=$(find . -path ./tests -prune -o -path ./fuzz -prune -o -path ./tools -prune -o \
	\( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
for f in $files; do
	dir=$(dirname "$f")
	# The top (main.c) wires every layer.
	[ "$dir" = . ] && continue
	if [ -z "${below[$dir]+set}" ]; then
		bad "$f" "folder $dir/ has no row in tools/check-layers.sh (its layer below)"
		continue
	fi
	checked=$((checked + 1))
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case $line in
		\#*include*) ;;
		*) continue ;;
		esac
		if [[ $line =~ ^#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
			inc=${BASH_REMATCH[1]}
			if [ -e "$dir/$inc" ]; then
				path=$(realpath -m --relative-to=. "$dir/$inc")
			elif [ -e "$inc" ]; then
				path=$inc
			else
				bad "$f:$n" "includes \"$inc\", which is not in agent/"
				continue
			fi
			idir=$(dirname "$path")
			[ "$idir" = "$dir" ] || [ "$idir" = base ] && continue
			in_list "$path" "${below[$dir]}" && continue
			allowed="$dir/"
			[ "$dir" = base ] || allowed="$allowed, base/"
			bad "$f:$n" "includes $path: $dir/ may include only $allowed${below[$dir]:+ and }${below[$dir]}"
		elif [[ $line =~ ^#[[:space:]]*include[[:space:]]*\<([^/\>]+) ]]; then
			lib=${BASH_REMATCH[1]}
			[ -n "${libs[$lib]+set}" ] || continue
			in_list "$dir" "${libs[$lib]}" && continue
			bad "$f:$n" "includes <$lib>: only ${libs[$lib]} use that library"
		fi
	done <"$f"
done
[ $fail = 0 ] && echo "check-layers: $checked files keep the include rule"
exit $fail
