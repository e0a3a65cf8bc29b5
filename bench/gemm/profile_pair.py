"""One shape, the generated GEMM and cuBLAS (torch.matmul) three times each, for a
profiler to pick a launch of each (bench/gemm/profile_pair.sh):

    python3 bench/gemm/profile_pair.py LIB M N K
"""
import os, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Gemm  # noqa: E402

lib, M, N, K = sys.argv[1], *map(int, sys.argv[2:5])
g = Gemm(lib)
torch.manual_seed(0)
A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    g("gemm_none", A, B, C)
    torch.matmul(A, B)
torch.cuda.synchronize()
