"""Why short kernels time bimodally: the CPU's launch time against CUDA events, checked by the profiler.

For each (dtype, shape, config) it prints, on one NVIDIA GPU:
- the CPU time of one Triton launch (Python's launch path, median of 50);
- the GPU time of the L2 flush that precedes every timed launch;
- the per-launch CUDA-event time as sweep.py takes it, without and with a GPU spin before the start event
  (`--lead-us`: the GPU is still busy when the CPU queues the start event and the launch);
- the kernel's own duration from the profiler (CUPTI), the reference both should match.

    python3 bench/tune/launch_gap.py --pairs bench/tune/data/confirm_blind19_pairs.json --max-ms 0.06 --out OUT
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def events_us(work) -> float:
    """GPU time (us) between two CUDA events recorded around `work`, waited for."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    work()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000


def event_times(fn, reps: int, lead_us: float) -> list[float]:
    """Per-launch event times as sweep.py takes them, the flush (and the spin, with lead_us) before each."""
    from sweep import flush_l2, gpu_spin

    times = []
    for _ in range(reps):
        flush_l2()
        gpu_spin(lead_us)
        times.append(events_us(fn))
    return times


def profiler_times(fn, reps: int) -> list[float]:
    """Kernel durations (us) as CUPTI records them, the flush between launches as in a sweep."""
    import torch
    from sweep import flush_l2

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush_l2()
            fn()
        torch.cuda.synchronize()
    return [e.time_range.elapsed_us() for e in prof.events() if "matmul_kernel" in e.name]


def flush_time_us(reps: int = 10) -> float:
    from sweep import flush_l2

    return statistics.median(events_us(flush_l2) for _ in range(reps))


def cpu_launch_us(fn, reps: int = 50) -> float:
    import torch

    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def summary(xs: list[float]) -> str:
    if not xs:
        return "n/a"
    return f"median {statistics.median(xs):7.1f} min {min(xs):7.1f} max {max(xs):7.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, required=True, help="confirm.py pairs: each row's pick and best")
    parser.add_argument("--max-ms", type=float, default=0.06, help="rows whose sweep best is shorter (from --sweep)")
    parser.add_argument("--sweep", type=Path, help="the sweep the pairs came from (its best times pick the rows)")
    parser.add_argument("--names", default="", help="comma-separated row names, instead of --sweep/--max-ms")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--lead-us", type=float, default=200.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import torch
    from sweep import TIMING, launch, make_operands

    TIMING.update(flush="read")
    pairs = json.loads(args.pairs.read_text(encoding="utf-8"))
    wanted = set(filter(None, args.names.split(",")))
    if args.sweep:
        doc = json.loads(args.sweep.read_text(encoding="utf-8"))
        short = {r["name"] for r in doc["results"] if min(x for x in r["ms"] if x is not None) < args.max_ms}
        wanted |= short
    rows = []
    flush_us = None
    for pair in (p for p in pairs if p["name"] in wanted):
        a, b, c = make_operands(pair["dtype"], pair["m"], pair["n"], pair["k"])
        for which in ("pick", "best"):
            cfg = tuple(pair[which])

            def fn(cfg=cfg):
                launch(a, b, c, cfg)

            fn()
            torch.cuda.synchronize()
            if flush_us is None:
                flush_us = flush_time_us()
                print(f"flush (read of 256 MB) between events: {flush_us:.1f} us", flush=True)
            row = {
                "name": pair["name"],
                "dtype": pair["dtype"],
                "which": which,
                "config": list(cfg),
                "cpu_launch_us": cpu_launch_us(fn),
                "events_us": event_times(fn, args.reps, 0.0),
                "events_lead_us": event_times(fn, args.reps, args.lead_us),
                "profiler_us": profiler_times(fn, args.reps),
            }
            rows.append(row)
            print(
                f"{pair['dtype']:5s} {pair['name']:18s} {which:4s} cpu launch {row['cpu_launch_us']:5.1f} us | "
                f"events {summary(row['events_us'])} | lead {summary(row['events_lead_us'])} | "
                f"cupti {summary(row['profiler_us'])}",
                flush=True,
            )
        del a, b, c
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "launch_gap.json").write_text(json.dumps({"flush_us": flush_us, "rows": rows}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
