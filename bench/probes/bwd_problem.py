"""The attention backward problem the probes share: bench/attention/backward.py's shapes
(B x N = 16384 tokens, hidden 2048), its inputs on the GPU, SDPA's cuDNN forward of them,
and launchers for our kernels and cuDNN's backward. Nothing is checked here: L and Delta
are zeros (finite; the kernel's work does not depend on their values) unless a probe
launches the Delta kernel into Delta itself.
"""
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

TOKENS, HIDDEN = 16384, 2048


def backward_kernels(spec_dir, D, causal, **toolchain):
    """attention_bwd.yaml's kernel (no grouped heads) and attention_bwd_delta.yaml's at D;
    `toolchain` goes to tkc.load (tkc=, include_dirs= for another build)."""
    kernel = next(k for k in tkc.load(Path(spec_dir) / "attention_bwd.yaml",
                                      **toolchain).kernels.values()
                  if int(k.params["D"]) == D and k.params["gqa"] == "false"
                  and (k.params["causal"] == "true") == causal)
    delta = next(k for k in tkc.load(Path(spec_dir) / "attention_bwd_delta.yaml",
                                     **toolchain).kernels.values()
                 if int(k.params["D"]) == D)
    return kernel, delta


class Problem:
    """Inputs and outputs of one configuration, B = 16384 / N and H = 2048 / D."""

    def __init__(self, D, N, causal):
        self.D, self.N, self.causal = D, N, causal
        self.B, self.H = max(1, TOKENS // N), HIDDEN // D
        B, H = self.B, self.H
        self.scale = 1 / math.sqrt(D)
        self.Q, self.K, self.V, self.dO = (
            torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        self.q, self.k, self.v = (t.detach().requires_grad_() for t in (self.Q, self.K, self.V))
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            self.out = F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=causal,
                                                      scale=self.scale)
        self.L = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
        self.Delta = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
        self.dQ = torch.empty(B, H, N, D, device="cuda", dtype=torch.float32)
        self.dK, self.dV = (torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                            for _ in range(2))
        self.named = dict(Q=self.Q, K=self.K, V=self.V, O=self.out.detach(), dO=self.dO,
                          L=self.L, Delta=self.Delta, dQ=self.dQ, dK=self.dK, dV=self.dV)
        self.sizes = {"B": B, "H": H, "N": N, "H_kv": H}
        self.stream = torch.cuda.current_stream().cuda_stream

    def describe(self):
        return "B=%d H=%d N=%d D=%d %s" % (self.B, self.H, self.N, self.D,
                                           "causal" if self.causal else "non-causal")

    def launch(self, kernel, scalars=()):
        kernel.launch([self.named[a.name].data_ptr() for a in kernel.info.arguments],
                      [self.sizes[s] for s in kernel.info.sizes], self.stream, list(scalars))

    def ours(self, kernel):
        """The kernel alone, with dQ zeroed first."""
        self.dQ.zero_()
        self.launch(kernel, [self.scale])

    def ours_whole(self, kernel, delta):
        """A whole backward as bench/attention/backward.py runs it: Delta, dQ zeroed, the
        kernel, dQ converted to bf16."""
        self.launch(delta)
        self.ours(kernel)
        return self.dQ.to(torch.bfloat16)

    def cudnn(self):
        """cuDNN's backward: torch.autograd.grad of SDPA's output."""
        torch.autograd.grad(self.out, (self.q, self.k, self.v), self.dO, retain_graph=True)
