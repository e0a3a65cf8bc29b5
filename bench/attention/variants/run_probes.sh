#!/usr/bin/env bash
# Several spec probes in one GPU session: every spec given is built (in parallel,
# beside the shipped spec) first, then bench/attention/probe_ab.py pairs each with
# the shipped kernels in turn, so that the timings do not share the GPU with a
# compiler. Needs tkc as for probe_ab.py (TKC_EXECUTABLE, TKC_INCLUDE_DIR,
# PYTHONPATH); DS, CAUSAL, NS and ROUNDS pass through.
#
#   bench/attention/variants/run_probes.sh bench/attention/variants/attention_bkv176.yaml ...
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
export BASEC=${BASEC:-$(mktemp -d)}
caches=()
for spec in "$@"; do caches+=("$(mktemp -d)"); done
export TKC_REAL="$TKC_EXECUTABLE"
python3 - "$@" <<EOF
import os, sys, threading
sys.path.insert(0, "python")
import tkc
ds = {"D": [int(x) for x in os.environ.get("DS", "64,128").split(",")]}
caches = dict(zip(sys.argv[1:], "${caches[*]}".split()))
jobs = [("kernels-spec/attention_fwd.yaml", os.environ["TKC_EXECUTABLE"], os.environ["BASEC"])]
jobs += [(s, "bench/attention/tkc-edit", caches[s]) for s in sys.argv[1:]]
def build(spec, exe, cache):
    try:
        tkc.load(spec, tkc=exe, cache_dir=cache, params=ds, verbose=False)
    except Exception as e:
        print("build failed:", spec, e, flush=True)
ts = [threading.Thread(target=build, args=j) for j in jobs]
[t.start() for t in ts]; [t.join() for t in ts]
EOF
i=0
for spec in "$@"; do
  echo "== $spec"
  SPEC_NEW="$spec" NEWC="${caches[$i]}" python3 bench/attention/probe_ab.py
  i=$((i + 1))
done
