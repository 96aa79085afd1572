"""Time a DLRM-style training step on one GPU: the measurements porter plan's model is checked on.

Standalone (torch + pyyaml only, runs on the device's python3). Builds the model a porter plan
description names (bench/plan/h200_dlrm.yaml): embedding tables behind one fused EmbeddingBag per
placement group (like FBGEMM's table-batched embedding), rowwise-Adagrad applied inside the
backward (no dense table gradient), bottom/top MLPs with a dot interaction, Adam on the MLPs.
Times fwd+bwd+optimizer and reads torch.cuda.max_memory_allocated for each case of a sweep over
batch size, matmul precision and table placement. "host" placement is the UVM stand-in: the
table lives in pinned host memory, lookups and the optimizer update run on the CPU, and the
pooled outputs and their gradients cross the host link.

    python3 bench/plan/run_h200.py --desc bench/plan/h200_dlrm.yaml --out measurements.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch
import torch.nn.functional as F
import yaml

LR, EPS = 0.01, 1e-8
DEV = "cuda"  # --quick runs on the CPU for a smoke test
HOST_TABLES = 2  # the host-placement cases move this many of the largest tables to the CPU

SWEEP = (
    [("tf32", "hbm", b) for b in (1024, 2048, 4096, 8192, 16384, 32768, 65536)]
    + [("bf16", "hbm", b) for b in (4096, 8192, 32768)]
    + [("tf32", "host", b) for b in (2048, 8192, 32768)]
)


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


def empty_cache():
    if DEV == "cuda":
        torch.cuda.empty_cache()


class FusedRowwiseAdagradBag(torch.autograd.Function):
    """Sum-pooled lookups whose backward updates the rows in place (rowwise Adagrad)."""

    @staticmethod
    def forward(ctx, weight, state, indices, offsets, bag_of_lookup, dummy):
        ctx.save_for_backward(weight, state, indices, bag_of_lookup)
        return F.embedding_bag(indices, weight, offsets, mode="sum")

    @staticmethod
    def backward(ctx, grad_out):
        weight, state, indices, bag_of_lookup = ctx.saved_tensors
        grad_out = grad_out.to(weight.device, weight.dtype)
        per_lookup = grad_out.index_select(0, bag_of_lookup)  # materialized per-lookup gradients
        rows, inverse = torch.unique(indices, return_inverse=True)
        row_grad = torch.zeros(rows.numel(), weight.shape[1], device=weight.device, dtype=weight.dtype)
        row_grad.index_add_(0, inverse, per_lookup)
        state.index_add_(0, rows, row_grad.pow(2).mean(dim=1))
        step = row_grad.mul_(LR / (state.index_select(0, rows).sqrt_().add_(EPS)).unsqueeze(1))
        weight.index_add_(0, rows, step, alpha=-1.0)
        return None, None, None, None, None, None


class TableGroup:
    """Tables that share a device, stacked into one weight with per-table row offsets."""

    def __init__(self, tables, device, pin):
        self.tables, self.device = tables, device
        total = sum(t["rows"] for t in tables)
        dim = tables[0]["dim"]
        self.weight = torch.empty(total, dim, device=device, pin_memory=pin).uniform_(-0.01, 0.01)
        self.state = torch.zeros(total, device=device, pin_memory=pin)
        starts, acc = [], 0
        for table in tables:
            starts.append(acc)
            acc += table["rows"]
        self.starts = starts
        self.dummy = torch.zeros(1, device=DEV, requires_grad=True)

    def batch(self, batch):
        """Indices, bag offsets and lookup->bag map for one batch (table-major bags)."""
        ids, lengths = [], []
        for table, start in zip(self.tables, self.starts):
            pooling = int(table["pooling"])
            ids.append(torch.randint(0, table["rows"], (batch * pooling,), device=self.device) + start)
            lengths.append(torch.full((batch,), pooling, device=self.device, dtype=torch.long))
        lengths = torch.cat(lengths)
        offsets = torch.cumsum(lengths, 0) - lengths
        bag_of_lookup = torch.repeat_interleave(torch.arange(lengths.numel(), device=self.device), lengths)
        return torch.cat(ids), offsets, bag_of_lookup

    def pooled(self, batch_data, batch):
        indices, offsets, bag_of_lookup = batch_data
        out = FusedRowwiseAdagradBag.apply(self.weight, self.state, indices, offsets, bag_of_lookup, self.dummy)
        out = out.to(DEV)
        return out.view(len(self.tables), batch, -1)


def mlp(widths, last_relu=True):
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(a, b))
        if last_relu or i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).to(DEV)


class Dense(torch.nn.Module):
    def __init__(self, desc, num_tables, dim):
        super().__init__()
        dense = desc["dense"]
        self.bottom = mlp([dense["num_dense_features"], *dense["bottom_mlp"]])
        features = num_tables + 1
        self.pairs = torch.triu_indices(features, features, offset=1, device=DEV)
        top_in = features * (features - 1) // 2 + dense["bottom_mlp"][-1]
        self.top = mlp([top_in, *dense["top_mlp"]], last_relu=False)

    def forward(self, dense_x, pooled):
        x = self.bottom(dense_x)
        feats = torch.cat([x.unsqueeze(1), pooled.to(x.dtype)], dim=1)  # B x F x d
        z = torch.bmm(feats, feats.transpose(1, 2))
        inter = z[:, self.pairs[0], self.pairs[1]]
        return self.top(torch.cat([x, inter], dim=1))


def run_case(desc, groups, dense_model, optim, precision, batch, iters, warmup):
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    nd = desc["dense"]["num_dense_features"]
    dense_x = torch.randn(batch, nd, device=DEV)
    labels = torch.rand(batch, 1, device=DEV)
    batches = [g.batch(batch) for g in groups]
    order = [t["name"] for g in groups for t in g.tables]

    def step():
        pooled = torch.cat([g.pooled(b, batch) for g, b in zip(groups, batches)], dim=0).transpose(0, 1)
        with torch.autocast(DEV, dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = dense_model(dense_x, pooled)
        loss = F.binary_cross_entropy_with_logits(logits.float(), labels)
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()

    sync()
    if DEV == "cuda":
        torch.cuda.reset_peak_memory_stats()
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    peak = torch.cuda.max_memory_allocated() if DEV == "cuda" else 0
    del batches, dense_x, labels
    times.sort()
    return {
        "order": order,
        "step_ms_median": times[len(times) // 2],
        "step_ms_mean": sum(times) / len(times),
        "step_ms_min": times[0],
        "peak_bytes": peak,
    }


def timed_ms(fn, reps=5):
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - start) * 1e3 / reps


def ceilings():
    """Copy bandwidth, host-link bandwidth and matmul rates: the ceilings the model's efficiencies sit under."""
    if DEV != "cuda":
        return {}
    out = {}
    x = torch.empty(1 << 30, device="cuda")
    y = torch.empty_like(x)
    out["hbm_copy_gbps"] = 2 * x.numel() * 4 / timed_ms(lambda: y.copy_(x)) / 1e6
    del x, y
    host = torch.empty(1 << 28, pin_memory=True)
    dev = torch.empty(1 << 28, device="cuda")
    out["h2d_gbps"] = host.numel() * 4 / timed_ms(lambda: dev.copy_(host, non_blocking=True)) / 1e6
    out["d2h_gbps"] = host.numel() * 4 / timed_ms(lambda: host.copy_(dev, non_blocking=True)) / 1e6
    del host, dev
    for name, dtype, tf32 in (("tf32", torch.float32, True), ("bf16", torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(8192, 8192, device="cuda", dtype=dtype)
        out[f"matmul_{name}_tflops"] = 2 * 8192**3 / timed_ms(lambda: a @ a) / 1e9
    torch.cuda.empty_cache()
    return out


def build(desc, placement):
    tables = sorted(desc["tables"], key=lambda t: -t["rows"])
    host = tables[:HOST_TABLES] if placement == "host" else []
    hbm = [t for t in desc["tables"] if t not in host]
    groups = [TableGroup(hbm, DEV, pin=False)]
    if host:
        groups.append(TableGroup(host, "cpu", pin=DEV == "cuda"))
    return groups, {t["name"]: ("host" if t in host else "hbm") for t in desc["tables"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--desc", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a CPU-less smoke test")
    args = parser.parse_args()
    with open(args.desc) as handle:
        desc = yaml.safe_load(handle)
    sweep = SWEEP
    if args.quick:
        for t in desc["tables"]:
            t["rows"] = max(1000, t["rows"] // 10000)
        sweep = [("tf32", "hbm", 256), ("bf16", "hbm", 256), ("tf32", "host", 256)]
    global DEV
    if args.quick and not torch.cuda.is_available():
        DEV = "cpu"
    torch.manual_seed(0)
    name, total = (
        ("cpu", 0)
        if DEV == "cpu"
        else (torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).total_memory)
    )
    results = {
        "device": name,
        "total_memory": total,
        "torch": torch.__version__,
        "host": platform.node(),
        "cpu_threads": torch.get_num_threads(),
        "cases": [],
    }
    results["ceilings"] = ceilings()
    print(json.dumps(results["ceilings"]), flush=True)
    dim = desc["tables"][0]["dim"]
    for placement in ("hbm", "host"):
        groups, where = build(desc, placement)
        dense_model = Dense(desc, len(desc["tables"]), dim)
        optim = torch.optim.Adam(dense_model.parameters(), lr=1e-3, fused=True)
        sync()
        static = torch.cuda.memory_allocated() if DEV == "cuda" else 0
        for precision, case_placement, batch in sweep:
            if case_placement != placement:
                continue
            case = run_case(desc, groups, dense_model, optim, precision, batch, args.iters, args.warmup)
            case.update(precision=precision, batch=batch, placement=where, static_bytes=static)
            results["cases"].append(case)
            print(json.dumps({k: v for k, v in case.items() if k not in ("placement", "order")}), flush=True)
            empty_cache()
        del groups, dense_model, optim
        empty_cache()
    with open(args.out, "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
