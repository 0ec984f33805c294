#!/usr/bin/env python3
"""torch_train.py: a small, deterministic PyTorch training job for the real-GPU checks.

An MLP (Linear + GELU blocks, fp32) or a transformer encoder (bf16 autocast), optionally
compiled with torch.compile (--compile; --compile-mode reduce-overhead replays the compiled
forward and backward passes as CUDA graphs), trained with Adam on fixed random data, one loss
read per step (a host synchronisation, as most training loops make, which is how libshim finds
the step).
Every kernel is deterministic (torch.use_deterministic_algorithms, no TF32, a fixed cuBLAS
workspace), so two runs on one GPU give bit-identical parameters: the checksum (SHA-256 of
every parameter's bytes and the Adam state) must not change when libshim moves memory.

With --save-on-cpu the forward pass and the loss run under
torch.autograd.graph.save_on_cpu(pin_memory=True): every tensor saved for the backward pass is
kept in pinned host memory and copied back when the backward pass needs it, the offload a
PyTorch user writes by hand instead of running under libshim. The copies are exact, so the
checksum must not change either.

Prints one JSON line: checksum, every step's loss and the last, steps, the median wall time of
the last half of the steps (ms), the first step's (compilation included), PyTorch's view of
device memory (its allocator's peaks included), the most device memory in use at a step's end
(the driver's count, total less free: whatever allocator or interposer holds it) and the
versions and device it ran on.
"""
import argparse
import contextlib
import hashlib
import json
import os
import statistics
import sys
import time

# cuBLAS reads this when its handle is made: deterministic reductions need a fixed workspace.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", choices=["mlp", "transformer"], default="mlp",
                   help="mlp: Linear + GELU blocks in fp32; transformer: encoder layers "
                        "(attention, layer norm) under bf16 autocast")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=512, help="transformer: tokens per sample")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model (Triton kernels, launched through dlsym)")
    p.add_argument("--compile-mode", default=None,
                   help="torch.compile's mode (implies --compile): reduce-overhead captures "
                        "CUDA graphs and replays them every step")
    p.add_argument("--save-on-cpu", action="store_true",
                   help="keep the tensors the forward pass saves in pinned host memory "
                        "(torch.autograd.graph.save_on_cpu)")
    return p.parse_args()


def checksum(model, opt):
    h = hashlib.sha256()
    for t in model.state_dict().values():
        h.update(t.detach().contiguous().cpu().numpy().tobytes())
    for state in opt.state.values():
        for k in sorted(state):
            v = state[k]
            if torch.is_tensor(v):
                h.update(v.detach().contiguous().cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def offload(a):
    """The context the forward pass and the loss run in: save_on_cpu when asked, else none."""
    if a.save_on_cpu:
        return torch.autograd.graph.save_on_cpu(pin_memory=True)
    return contextlib.nullcontext()


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device"}))
        return 77
    torch.manual_seed(a.seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    if a.model == "mlp":
        blocks = []
        for _ in range(a.layers):
            blocks += [torch.nn.Linear(a.width, a.width), torch.nn.GELU()]
        model = torch.nn.Sequential(*blocks).to(dev)
        shape = (a.batch, a.width)
    else:
        # The math attention kernels: flash and memory-efficient backward passes are not
        # deterministic, and the checksum must be.
        torch.backends.cuda.enable_flash_sdp(False)
        torch.backends.cuda.enable_mem_efficient_sdp(False)
        layer = torch.nn.TransformerEncoderLayer(a.width, a.heads, 4 * a.width, dropout=0.0,
                                                 batch_first=True, norm_first=True)
        model = torch.nn.TransformerEncoder(layer, a.layers, enable_nested_tensor=False).to(dev)
        shape = (a.batch, a.seq, a.width)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    compiled = a.compile or a.compile_mode is not None
    step_model = torch.compile(model, mode=a.compile_mode) if compiled else model
    # CUDA graph trees: each step's replays may overwrite the last step's outputs, which the loop
    # no longer holds by then.
    graphs = compiled and a.compile_mode == "reduce-overhead"
    gen = torch.Generator().manual_seed(a.seed + 1)
    x = torch.randn(*shape, generator=gen).to(dev)
    y = torch.randn(*shape, generator=gen).to(dev)
    bf16 = a.model == "transformer"
    times, losses, used_max = [], [], 0
    for _ in range(a.steps):
        t0 = time.perf_counter()
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        with offload(a):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                out = step_model(x)
            loss = torch.nn.functional.mse_loss(out.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append((time.perf_counter() - t0) * 1e3)
        free, total = torch.cuda.mem_get_info()
        used_max = max(used_max, total - free)
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    print(json.dumps({
        "checksum": checksum(model, opt),
        "loss": losses[-1] if losses else None,
        "losses": losses,
        "steps": a.steps,
        "step_ms": round(statistics.median(times[a.steps // 2:]), 3),
        "first_step_ms": round(times[0], 3) if times else None,
        "mem_free": free,
        "mem_total": total,
        "peak_reserved": torch.cuda.max_memory_reserved(),
        "peak_allocated": torch.cuda.max_memory_allocated(),
        "device_used_max": used_max,
        "save_on_cpu": a.save_on_cpu,
        "compile_mode": a.compile_mode if compiled else None,
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "allocator": torch.cuda.get_allocator_backend(),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
