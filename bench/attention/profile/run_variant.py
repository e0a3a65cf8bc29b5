# Runs one generated attention kernel (SPEC, built by TKC_TOOL) three times, for ncu.
import math, os, sys
from pathlib import Path
import torch
sys.path.insert(0, "python")
import tkc
D, N = int(sys.argv[1]), int(sys.argv[2])
B, H = 16384 // N, 2048 // D
mod = tkc.load(Path(os.environ["SPEC"]), tkc=os.environ.get("TKC_TOOL", os.environ["TKC_EXECUTABLE"]),
               params={"D": D, "causal": False}, verbose=False)
k = next(iter(mod.kernels.values()))
Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
O = torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16); L = torch.empty(B, H, N, device="cuda")
p = [t.data_ptr() for t in (Q, K, V, O, L)]; s = [{"B": B, "H": H, "N": N, "H_kv": H}[x] for x in k.info.sizes]
st = torch.cuda.current_stream().cuda_stream
for _ in range(3):
    k.launch(p, s, st, [1 / math.sqrt(D)])
torch.cuda.synchronize()
