"""Names the cuBLAS kernel torch.matmul runs at each of the six GEMM anchor shapes
(bf16, A row-major M x K times B row-major K x N), one profiled call each:

    python3 bench/gemm/cublas_kernels.py
"""
import torch
from torch.profiler import profile, ProfilerActivity

SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
          (8192, 8192, 28672), (16384, 4096, 4096), (4096, 14336, 4096)]

for M, N, K in SHAPES:
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    torch.matmul(A, B)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.matmul(A, B)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    print(M, N, K, names, flush=True)
