"""What the GPU checks share: a tally of results, and attention's fp32 reference."""

import torch


class Results:
    """Counts checks and keeps the failed ones; prints each as it is reported."""

    def __init__(self):
        self.failed = []
        self.count = 0

    def report(self, ok, text):
        self.count += 1
        if not ok:
            self.failed.append(text)
        print("%s %s" % ("ok  " if ok else "FAIL", text), flush=True)

    def summary(self, name, extra=""):
        """Prints `name: P passed, F failed` (and `extra`); returns the failed checks."""
        print("%s: %d passed, %d failed%s" % (name, self.count - len(self.failed),
                                              len(self.failed), extra), flush=True)
        return self.failed

    def skip(self, text):
        print("SKIP %s" % text, flush=True)

    def expect_error(self, kind, needle, what, fn):
        """fn() must raise `kind` with `needle` in its message."""
        try:
            fn()
        except kind as e:
            self.report(needle in str(e), "%s: %s: %s" % (what, type(e).__name__, e))
            return
        except Exception as e:  # the wrong kind of error
            self.report(False, "%s: expected %s, got %s: %s" % (what, kind.__name__,
                                                                type(e).__name__, e))
            return
        self.report(False, "%s: no error" % what)


def begin(seed):
    """A run's start: TF32 off (the references are fp32), the GPU named, a tally and a
    generator on the GPU seeded with `seed`."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print("%s, torch %s" % (torch.cuda.get_device_name(), torch.__version__), flush=True)
    return Results(), torch.Generator(device="cuda").manual_seed(seed)


def rel(x, ref):
    """||x - ref|| / ||ref|| (Frobenius), the denominator at least 1e-3 an element (RMS): at
    N = 1 the exact dQ and dK are 0 (one key: dS = P (dP - Delta) = 0), and a kernel's are
    rounding."""
    floor = 1e-3 * ref.numel() ** 0.5
    return ((x.float() - ref.float()).norm() / ref.float().norm().clamp_min(floor)).item()


def attention_reference(q, k, v, scale, causal=False, window=None, softcap=None, slopes=None):
    """(O, L) in fp32 by plain torch operations, differentiable where q, k, v require grad:
    q [B, H, N, D], k and v [B, H_kv, N, D], query head h reading key/value head
    h / (H / H_kv). The variants as their forward specs define them: a causal sliding
    window (query r sees keys r - window < key <= r), scores soft-capped to
    softcap * tanh(s / softcap), ALiBi's slopes[h] * (key - query) added."""
    H, H_kv, N = q.shape[1], k.shape[1], q.shape[2]
    kk = k.float().repeat_interleave(H // H_kv, dim=1)
    vv = v.float().repeat_interleave(H // H_kv, dim=1)
    S = torch.matmul(q.float(), kk.transpose(-1, -2)) * scale
    if softcap is not None:
        S = torch.tanh(S / softcap) * softcap
    pos = torch.arange(N, device=q.device)
    if slopes is not None:
        S = S + slopes.float()[None, :, None, None] * (pos[None, :] - pos[:, None]).float()
    hidden = torch.zeros(N, N, dtype=torch.bool, device=q.device)
    if causal or window is not None:
        hidden |= pos[None, :] > pos[:, None]
    if window is not None:
        hidden |= pos[None, :] <= pos[:, None] - window
    S = S.masked_fill(hidden, float("-inf"))
    L = torch.logsumexp(S, dim=-1)
    return torch.matmul(torch.exp(S - L[..., None]), vv), L
