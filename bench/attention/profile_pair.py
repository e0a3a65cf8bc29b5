#!/usr/bin/env python3
"""Runs the shipped attention kernel and cuDNN (SDPA) three times each at one FA3-protocol
configuration, for a profiler (bench/NOTES.md, session 8):

    ncu --launch-skip 7 --launch-count 2 --section SpeedOfLight --section WarpStateStats \
        --section SchedulerStats --section ComputeWorkloadAnalysis \
        python3 bench/attention/profile_pair.py D N [causal]

(the first launches are the inputs' random fills and the warm-up calls). SPEC names another
spec and TKC_TOOL another tkc (e.g. variants/tkc-chain) for our side; BASELINE=0 leaves SDPA
out (profile/sass_ours.sh).
"""
import math, sys, os
from pathlib import Path
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc
D, N = int(sys.argv[1]), int(sys.argv[2])
causal = len(sys.argv) > 3 and sys.argv[3] == "causal"
B, H = 16384 // N, 2048 // D
spec = Path(os.environ.get("SPEC", ROOT / "kernels-spec/attention_fwd.yaml"))
extra = {"tkc": os.environ["TKC_TOOL"]} if "TKC_TOOL" in os.environ else {}
mod = tkc.load(spec, params={"D": D, "causal": causal}, verbose=False, **extra)
baseline = os.environ.get("BASELINE", "1") != "0"
k = next(iter(mod.kernels.values()))
Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
O = torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16); L = torch.empty(B, H, N, device="cuda")
p = [t.data_ptr() for t in (Q, K, V, O, L)]; s = [{"B": B, "H": H, "N": N, "H_kv": H}[x] for x in k.info.sizes]
st = torch.cuda.current_stream().cuda_stream
for _ in range(3):
    k.launch(p, s, st, [1 / math.sqrt(D)])
    if baseline:
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(Q, K, V, is_causal=causal)
torch.cuda.synchronize()
