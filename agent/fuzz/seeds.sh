#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# seeds.sh HARNESS DIR: writes HARNESS's seed corpus into DIR from the
# repository's one copy of the test data (testdata/, see its README):
#   fuzz_config      testdata/config/*.yaml and testdata/fuzz/config/*
#   fuzz_kubeconfig  testdata/fuzz/kubeconfig/*
#   fuzz_decode      byte 0 (the event selector) then the objects of
#                    testdata/real-objects/*.json and testdata/cases/*/
#                    objects.json, one JSON object per line, as a watch
#                    stream delivers them (a list's items get its kind)
set -eu
td=$(cd "$(dirname "$0")/../../testdata" && pwd)
h=$1 dir=$2

case "$h" in
fuzz_config)
	for f in "$td"/config/*.yaml; do cp "$f" "$dir/testdata-$(basename "$f")"; done
	cp "$td"/fuzz/config/* "$dir/"
	;;
fuzz_kubeconfig)
	cp "$td"/fuzz/kubeconfig/* "$dir/"
	;;
fuzz_decode)
	for f in "$td"/real-objects/*.json "$td"/cases/*/objects.json; do
		case "$f" in
		*/cases/*) n=case$(basename "$(dirname "$f")") ;;
		*) n=$(basename "$f" .json) ;;
		esac
		{
			printf '\0'
			jq -c '(.kind // "" | sub("List$"; "")) as $k |
				if .items then .items[] | (if .kind then . else .kind = $k end) else . end' "$f"
		} >"$dir/$n.ndjson"
	done
	;;
*)
	echo "seeds.sh: no seeds for '$h'" >&2
	exit 1
	;;
esac
