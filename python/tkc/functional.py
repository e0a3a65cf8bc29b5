"""Differentiable functions on tkc's specs: attention, and its Hugging Face registration.

    import tkc.functional as tkf
    O = tkf.attention(q, k, v, causal=True)     # q [B, H, N, D], k, v [B, H_kv, N, D], bf16
    O.float().sum().backward()                  # q.grad, k.grad, v.grad

One forward spec and its backward spec become one differentiable function. The forward
saves O and its log-sum-exp L; the backward runs Delta = rowsum(dO * O)
(attention_bwd_delta.yaml), zeroes dQ (f32, added into), runs the backward spec and converts
dQ (and, for grouped-query heads, dK and dV, summed over each group in f32) to bf16.

Both halves are `torch.library` custom operators, `tkc::attention_forward` and
`tkc::attention_backward`, each with a fake (meta) implementation, and the forward has a
registered autograd formula, so `torch.compile` traces a model that calls `attention`
without graph breaks. The kernels are compiled by `tkc.load` on first use (one build per
spec and parameter set, cached on disk) and kept for the process.

Variants, at most one a call (each a spec pair in kernels-spec/):

| argument | forward spec | backward spec |
|---|---|---|
| (none) | attention_fwd.yaml | attention_bwd.yaml |
| `softcap=c` | attention_softcap.yaml | attention_bwd_softcap.yaml |
| `window=W` (causal only) | attention_sliding_window.yaml | attention_bwd_sliding_window.yaml |
| `alibi_slopes=[H] f32` | attention_alibi.yaml | attention_bwd_alibi.yaml |

See docs/Integration.md ("Training with tkc attention").
"""

import math
import threading
from typing import Optional, Tuple

import torch

from . import builder

#: Head dimensions the backward specs are instantiated for (the forward takes 256 too).
BACKWARD_HEAD_DIMS = (64, 128)

_VARIANTS = {
    # variant: (forward spec, backward spec, has a causal parameter)
    "plain": ("attention_fwd.yaml", "attention_bwd.yaml", True),
    "softcap": ("attention_softcap.yaml", "attention_bwd_softcap.yaml", True),
    "window": ("attention_sliding_window.yaml", "attention_bwd_sliding_window.yaml", False),
    "alibi": ("attention_alibi.yaml", "attention_bwd_alibi.yaml", True),
}
_DELTA_SPEC = "attention_bwd_delta.yaml"


class _Kernels:
    """The kernels this module calls, built by tkc.load on first use and kept. Different
    kernels build concurrently (prebuild); one kernel is built once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries = {}

    def get(self, spec: str, **params):
        key = (spec, tuple(sorted(params.items())))
        with self._lock:
            entry = self._entries.setdefault(key, [threading.Lock(), None])
        with entry[0]:
            if entry[1] is None:
                from . import load
                entry[1] = load(builder.find_spec_dir() / spec, **params)
        return entry[1].kernel(**params)


_kernels = _Kernels()


def _variant(window: int, softcap: float, alibi: bool) -> str:
    chosen = [name for name, on in (("window", window > 0), ("softcap", softcap > 0),
                                    ("alibi", alibi)) if on]
    if len(chosen) > 1:
        raise ValueError("tkc.functional.attention: %s cannot be combined; pass at most one "
                         "of window=, softcap= and alibi_slopes=" % " and ".join(chosen))
    return chosen[0] if chosen else "plain"


def _forward_kernel(variant: str, D: int, causal: bool):
    spec, _, has_causal = _VARIANTS[variant]
    params = {"D": D, "causal": causal} if has_causal else {"D": D}
    return _kernels.get(spec, **params)


def _backward_kernel(variant: str, D: int, causal: bool, gqa: bool):
    _, spec, has_causal = _VARIANTS[variant]
    params = {"D": D, "causal": causal, "gqa": gqa} if has_causal else {"D": D, "gqa": gqa}
    return _kernels.get(spec, **params)


def _delta_kernel(D: int):
    return _kernels.get(_DELTA_SPEC, D=D)


def _variant_scalars(variant: str, window: int, softcap: float) -> dict:
    if variant == "window":
        return {"window": float(window)}
    if variant == "softcap":
        return {"cap": softcap}
    return {}


def _variant_inputs(variant: str, alibi_slopes: Optional[torch.Tensor]) -> dict:
    return {"slopes": alibi_slopes.detach().contiguous()} if variant == "alibi" else {}


def prebuild(head_dims=BACKWARD_HEAD_DIMS, causal=(False, True), gqa=(False, True),
             variants=("plain",), workers=8):
    """Builds (or loads from the cache) every kernel that attention() and its backward use
    for these head dimensions, causal settings, grouped-query settings (H != H_kv) and
    variants ("plain", "softcap", "window", "alibi"), `workers` nvcc builds at a time, so
    that the first training step does not compile them one by one."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = set()  # (function, arguments): the lookups attention() and its backward make
    for variant in variants:
        if variant not in _VARIANTS:
            raise ValueError("prebuild: unknown variant %r; one of %s"
                             % (variant, ", ".join(_VARIANTS)))
        for D in head_dims:
            jobs.add((_delta_kernel, (D,)))
            for c in causal:
                if variant == "window" and not c:
                    continue  # a causal sliding window
                jobs.add((_forward_kernel, (variant, D, c)))
                for g in gqa:
                    jobs.add((_backward_kernel, (variant, D, c, g)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for f in [pool.submit(fn, *a) for fn, a in jobs]:
            f.result()
    return len(jobs)


@torch.library.custom_op("tkc::attention_forward", mutates_args=(), device_types="cuda")
def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      alibi_slopes: Optional[torch.Tensor], causal: bool, scale: float,
                      window: int, softcap: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """(O [B, H, N, D] bf16, L [B, H, N] f32, the natural-log log-sum-exp of each query's
    scores). `window` 0 and `softcap` 0 mean none."""
    variant = _variant(window, softcap, alibi_slopes is not None)
    kernel = _forward_kernel(variant, q.shape[-1], causal)
    return kernel(Q=q.detach().contiguous(), K=k.detach().contiguous(),
                  V=v.detach().contiguous(), scale=scale,
                  **_variant_scalars(variant, window, softcap),
                  **_variant_inputs(variant, alibi_slopes))


@attention_forward.register_fake
def _attention_forward_fake(q, k, v, alibi_slopes, causal, scale, window, softcap):
    B, H, N, _ = q.shape
    return q.new_empty(q.shape), q.new_empty((B, H, N), dtype=torch.float32)


@torch.library.custom_op("tkc::attention_backward", mutates_args=(), device_types="cuda")
def attention_backward(grad_o: torch.Tensor, grad_l: Optional[torch.Tensor], q: torch.Tensor,
                       k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                       alibi_slopes: Optional[torch.Tensor], causal: bool, scale: float,
                       window: int, softcap: float
                       ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV) of attention_forward's outputs given their gradients: grad_o of O and
    grad_l (or None) of L. L's gradient enters as Delta - grad_l: d lse / dS = P, so
    dS = P (dP - Delta + grad_l)."""
    variant = _variant(window, softcap, alibi_slopes is not None)
    B, H, N, D = q.shape
    H_kv = k.shape[1]
    if D not in BACKWARD_HEAD_DIMS:
        raise NotImplementedError("tkc.functional.attention: the backward is instantiated "
                                  "for D in %s, not %d" % (list(BACKWARD_HEAD_DIMS), D))
    q, k, v, o, lse = (t.detach().contiguous() for t in (q, k, v, o, lse))
    grad_o = grad_o.detach().contiguous()
    delta = _delta_kernel(D)(o, grad_o)
    if grad_l is not None:
        delta = delta - grad_l.detach().float()
    gqa = H != H_kv
    kernel = _backward_kernel(variant, D, causal, gqa)
    dq = torch.zeros((B, H, N, D), dtype=torch.float32, device=q.device)
    if gqa:
        dk = torch.zeros(k.shape, dtype=torch.float32, device=k.device)
        dv = torch.zeros(v.shape, dtype=torch.float32, device=v.device)
        out = {"dQ": dq, "dK32": dk, "dV32": dv}
    else:
        dk, dv = torch.empty_like(k), torch.empty_like(v)
        out = {"dQ": dq, "dK": dk, "dV": dv}
    kernel(Q=q, K=k, V=v, dO=grad_o, L=lse, Delta=delta, out=out, scale=scale,
           **_variant_scalars(variant, window, softcap), **_variant_inputs(variant, alibi_slopes))
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


@attention_backward.register_fake
def _attention_backward_fake(grad_o, grad_l, q, k, v, o, lse, alibi_slopes, causal, scale,
                             window, softcap):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _setup_context(ctx, inputs, output):
    q, k, v, alibi_slopes, causal, scale, window, softcap = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, alibi_slopes)
    ctx.options = (causal, scale, window, softcap)
    ctx.set_materialize_grads(False)  # L's gradient stays None unless L is used


def _backward(ctx, grad_o, grad_l):
    q, k, v, o, lse, alibi_slopes = ctx.saved_tensors
    if grad_o is None:
        grad_o = torch.zeros_like(o)
    dq, dk, dv = attention_backward(grad_o, grad_l, q, k, v, o, lse, alibi_slopes,
                                    *ctx.options)
    need = ctx.needs_input_grad
    return (dq if need[0] else None, dk if need[1] else None, dv if need[2] else None,
            None, None, None, None, None)


attention_forward.register_autograd(_backward, setup_context=_setup_context)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
              scale: Optional[float] = None, window: Optional[int] = None,
              softcap: Optional[float] = None, alibi_slopes: Optional[torch.Tensor] = None,
              return_lse: bool = False):
    """softmax(scale * q kᵀ) v over bf16 CUDA tensors q [B, H, N, D] and k, v
    [B, H_kv, N, D] (H a multiple of H_kv: query head h reads key/value head
    h / (H / H_kv)); differentiable in q, k and v for D 64 and 128.

    causal: query r sees keys up to r. scale: 1/sqrt(D) by default. window=W: causal
    sliding window, query r sees keys r - W < key <= r (needs causal=True). softcap=c:
    scores c * tanh(s / c). alibi_slopes: f32 [H], scores + slopes[h] * (key - query); it
    gets no gradient. return_lse: also return L [B, H, N] f32, the natural-log log-sum-exp
    of each query's scores (differentiable too). Inputs of any strides are copied to
    contiguous ones where needed; so are gradients.
    """
    D = q.shape[-1]
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("tkc.functional.attention: q, k and v must be [B, H, N, D] and "
                         "[B, H_kv, N, D]; got %s, %s, %s"
                         % (list(q.shape), list(k.shape), list(v.shape)))
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.device.type not in ("cuda", "meta"):  # meta: shapes only, by the fake kernel
            raise ValueError("tkc.functional.attention: %s is on %s; the kernels take CUDA "
                             "tensors" % (name, t.device))
    if scale is None:
        scale = 1.0 / math.sqrt(D)
    if window is not None:
        if not causal:
            raise ValueError("tkc.functional.attention: window= is a causal sliding window; pass "
                             "causal=True with it")
        if int(window) != window or window < 1:
            raise ValueError("tkc.functional.attention: window must be a whole number >= 1, got %r"
                             % (window,))
    if softcap is not None and not softcap > 0:
        raise ValueError("tkc.functional.attention: softcap must be > 0, got %r" % (softcap,))
    _variant(int(window or 0), float(softcap or 0.0), alibi_slopes is not None)
    if alibi_slopes is not None and alibi_slopes.requires_grad and torch.is_grad_enabled():
        raise ValueError("tkc.functional.attention: alibi_slopes get no gradient; pass a "
                         "tensor that does not require grad (e.g. slopes.detach())")
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)) and \
            D not in BACKWARD_HEAD_DIMS:
        raise NotImplementedError("tkc.functional.attention: the backward is instantiated "
                                  "for D in %s, not %d; call under torch.no_grad() for the "
                                  "forward alone" % (list(BACKWARD_HEAD_DIMS), D))
    o, lse = attention_forward(q, k, v, alibi_slopes, bool(causal), float(scale),
                               int(window or 0), float(softcap or 0.0))
    return (o, lse) if return_lse else o


def hf_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                 **kwargs):
    """A Hugging Face transformers attention function (`AttentionInterface`): query
    [B, H, N, D], key and value [B, H_kv, N, D] bf16; returns (output [B, N, H, D], None).

    Causal comes from `is_causal` (the call's, else the module's); `sliding_window` and
    `softcap` select those variants. Register it with `register_hf()`, which also
    registers a mask function that leaves plain causal masks to the kernel. A mask that
    remains (padding, or a pattern of the model's own), dropout, or queries and keys of
    different lengths (decoding with a cache) are refused, never ignored."""
    if attention_mask is not None:
        raise ValueError("tkc attention: the model passed an attention mask (padding or a "
                         "pattern of its own), which these kernels do not take; batches "
                         "without padding and causal or sliding-window models only")
    if dropout:
        raise ValueError("tkc attention: dropout %r is not supported; set the model's "
                         "attention dropout to 0" % (dropout,))
    if query.shape[2] != key.shape[2]:
        raise ValueError("tkc attention: %d queries meet %d keys (decoding with a cache?); "
                         "these kernels take equal lengths: use attn_implementation='sdpa' "
                         "to generate" % (query.shape[2], key.shape[2]))
    causal = kwargs.get("is_causal")
    if causal is None:
        causal = getattr(module, "is_causal", True)
    out = attention(query, key, value, causal=bool(causal), scale=scaling,
                    window=kwargs.get("sliding_window"), softcap=kwargs.get("softcap"))
    return out.transpose(1, 2), None


def register_hf(name: str = "tkc") -> str:
    """Registers `hf_attention` with transformers under `name`, with a mask function that
    builds SDPA's masks but skips the plain causal one (the kernel applies it), so that a
    model loaded with `attn_implementation=name` runs on tkc's kernels. Returns name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    def mask(*args, **kwargs):
        # A causal or sliding-window mask without padding is skipped (None): the kernel
        # applies it, from is_causal and the sliding_window the layer passes, as with
        # FlashAttention. Anything else comes back as a tensor, which hf_attention refuses.
        kwargs["allow_is_causal_skip"] = True
        for size in ("local_size", "local_attention_size"):
            if size in kwargs:
                kwargs[size] = None
        return sdpa_mask(*args, **kwargs)

    AttentionInterface.register(name, hf_attention)
    AttentionMaskInterface.register(name, mask)
    return name
