"""How far the H200's SM clock drift moves the sweeps' timings of long 16-bit GEMMs.

    python3 bench/tune/clock_drift.py --stored            # CPU: second timings vs first, from the stored sweeps
    python3 bench/tune/clock_drift.py --device [--idle-s 0.25]   # on the GPU (torch + triton, like sweep.py)

sweep.py times each config right after the previous one. Under that back-to-back load a long bf16/fp16
GEMM draws the board to its power limit and the SM clock falls from 1980 MHz to ~1400-1500 (dips to
~1000), so a config's time depends on when it was timed: 15-25% slower once the clock has dropped.
--stored shows it in the sweeps themselves: each sweep re-times its 8 fastest configs per shape after
the first pass ('retime_ms'); per dtype and kernel length, the second timing over the first.
--device times four 128x256 configs of long shapes two ways: back to back (the sweep's protocol) and
with the GPU idle for --idle-s before each timed config (the clock stays at ~1980 MHz), and prints
each time with the SM clock read just after it. The sweep's measured best at large M then says more
about the clock at the time than about the config: data/h200_clock_drift.txt holds one run.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIGS = [(128, 256, 32, 8, 4, 8), (128, 256, 32, 8, 5, 8), (128, 256, 64, 8, 3, 8), (128, 256, 64, 8, 4, 8)]
SHAPES = [  # (dtype, name, M, N, K): calibration rows of the stored sweeps, 9 to 116 waves of 128x256
    ("bf16", "b12_bf_m65536_o", 65536, 5120, 5120),
    ("bf16", "b11_bf_m32768_up", 32768, 15360, 3840),
    ("bf16", "b13_bf_m49152_down", 49152, 4096, 13696),
    ("bf16", "c2_sq_8k", 8192, 8192, 8192),
    ("bf16", "m16384_up8b", 16384, 14336, 4096),
    ("fp16", "b12_h_m40960_o", 40960, 4096, 4096),
]
LENGTHS = ((0.1, "<0.1 ms"), (0.5, "0.1-0.5"), (1.5, "0.5-1.5"), (3.0, "1.5-3"), (math.inf, ">3 ms"))


def stored_drift() -> None:
    """Second timing over first for the re-timed configs of every stored sweep, by kernel length."""
    sys.path.insert(0, str(HERE))
    from validate import DATA  # the calibration sweeps by name, never a glob: a sealed blind split sits beside them

    ratios: dict[tuple[str, str], list[float]] = {}
    for path in (p for p in DATA if p.exists()):
        for res in json.loads(path.read_text(encoding="utf-8"))["results"]:
            retimed = res.get("retime_ms") or {}
            first = [t for t in res["ms"] if t is not None]
            if not retimed or not first:
                continue
            length = next(label for bound, label in LENGTHS if min(first) < bound)
            cell = ratios.setdefault((res["dtype"], length), [])
            cell.extend(t / res["ms"][int(i)] for i, t in retimed.items() if res["ms"][int(i)])
    print(f"{'dtype':6s}{'best time':>10s}{'n':>6s}{'geomean':>9s}{'sd(log)':>9s}{'max':>7s}")
    for (dtype, length), vals in sorted(ratios.items()):
        logs = [math.log(v) for v in vals]
        geo = math.exp(sum(logs) / len(logs))
        print(f"{dtype:6s}{length:>10s}{len(vals):6d}{geo:9.3f}{statistics.pstdev(logs):9.3f}{max(vals):7.3f}")


def device_drift(idle_s: float) -> None:
    """Back-to-back vs idle-gapped timings of CONFIGS on SHAPES, with the SM clock after each."""
    import time

    import pynvml
    import torch
    from sweep import launch, make_operands, time_launch

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)

    def timed(a, b, c, cfg) -> str:
        ms = time_launch(lambda: launch(a, b, c, cfg), budget_ms=8.0)
        return f"{ms:.3f}@{pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)}"

    for dtype, name, m, n, k in SHAPES:
        a, b, c = make_operands(dtype, m, n, k)
        for cfg in CONFIGS:  # compile and warm
            launch(a, b, c, cfg)
        for gap in (0.0, idle_s):
            torch.cuda.synchronize()
            time.sleep(2.0)
            cells: dict[tuple, list[str]] = {cfg: [] for cfg in CONFIGS}
            for rnd in range(4):  # alternate the order, so no config is always timed first
                for cfg in CONFIGS if rnd % 2 == 0 else CONFIGS[::-1]:
                    torch.cuda.synchronize()
                    time.sleep(gap)
                    cells[cfg].append(timed(a, b, c, cfg))
            row = " | ".join(f"{cfg[2]}k{cfg[4]}s " + " ".join(cells[cfg]) for cfg in CONFIGS)
            print(f"{dtype} {name} idle {gap:.2f} s: {row}", flush=True)
        del a, b, c
        torch.cuda.empty_cache()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stored", action="store_true", help="summarise the stored sweeps' re-timings (CPU)")
    mode.add_argument("--device", action="store_true", help="time on the GPU, back to back and idle-gapped")
    parser.add_argument("--idle-s", type=float, default=0.25, help="idle before each timed config (--device)")
    args = parser.parse_args()
    if args.stored:
        stored_drift()
    else:
        device_drift(args.idle_s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
