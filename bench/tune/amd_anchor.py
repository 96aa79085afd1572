"""Anchor porter's AMD GEMM model on AMD's own tuned Triton configs.

    /work/venv/bin/python bench/tune/amd_anchor.py                   # score (the stored labels)
    /work/venv/bin/python bench/tune/amd_anchor.py --extract GIT_DIR # rebuild the labels from a ROCm/aiter clone

AMD's aiter library ships per-device tables of autotuned configs for its plain bf16 Triton GEMM
(gemm_a16w16: one config per M bucket, per (N, K) or generic). Only labels derived from them are
stored here (bench/tune/data/amd_tuned_classes.json: shape, bucket, the tuned tile class and
knobs, with the source commit and path), never the tables. A class is (BLOCK_M, BLOCK_N,
BLOCK_K, num_warps); NUM_KSPLIT (split-K) is recorded, and each class is predicted at every
split count of KSPLITS (its best counts), as the tables' kernel can run it.

For each entry, the candidates are the classes the tables of that arch use anywhere (the tuners'
vocabulary); a class's prediction is its best over num_stages 2 and 3, waves_per_eu 0 and 2 and
matrix_instr_nonkdim 16 (and 32 where it fits), NUM_KSPLIT 1, 2, 4, 8 and 16. Reported: how often the tuned class is porter's
top-1 and in its top-4, and its median rank, for porter's model of the entry's target (mi300x
for gfx942, mi350x for gfx950), for porter's H200 model on the same candidates, and for the
baseline that ranks classes by how often the calibration entries of the other tables chose them
at this M bucket (then overall).
Calibration and blind entries are split by table (BLIND_TABLES). One AMD constant is fit on the
calibration entries only (reduce_launch_us, split-K's reduce kernel, in specs.yaml); the rest come
from compile records and the H200 fit. The baseline's counts come from the calibration entries only.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LABELS = ROOT / "bench" / "tune" / "data" / "amd_tuned_classes.json"
SOURCE = "https://github.com/ROCm/aiter"
TABLE_DIR = "aiter/ops/triton/configs/gemm"
TABLE = re.compile(r"^(gfx942|gfx950)-GEMM-A16W16(?:-N=(\d+)-K=(\d+))?\.json$")
BLIND_TABLES = {
    "gfx950-GEMM-A16W16-N=5120-K=2880.json",
    "gfx950-GEMM-A16W16-N=2880-K=512.json",
    "gfx950-GEMM-A16W16-N=384-K=7168.json",
    "gfx942-GEMM-A16W16.json",
}
GENERIC_NK = 4096  # the N = K a generic (shape-less) table is scored at
TARGETS = {"gfx942": "mi300x", "gfx950": "mi350x"}
KSPLITS = (1, 2, 4, 8, 16)  # split-K slice counts every class is predicted at (its best counts)


def bucket_m(label: str) -> int:
    """A representative M for an M bucket: its upper end; 'any' and M_GEQ_x stand for 8192."""
    found = re.match(r"M_LEQ_(\d+)$", label)
    return int(found.group(1)) if found else 8192


def extract(git_dir: Path) -> None:
    commit = subprocess.run(
        ["git", "-C", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    names = subprocess.run(
        ["git", "-C", str(git_dir), "ls-tree", "--name-only", "HEAD", TABLE_DIR + "/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    entries = []
    for path in sorted(names):
        found = TABLE.match(Path(path).name)
        if not found:
            continue
        arch, n, k = found.group(1), found.group(2), found.group(3)
        table = json.loads(
            subprocess.run(
                ["git", "-C", str(git_dir), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
            ).stdout
        )
        for label, cfg in table.items():
            entries.append(
                {
                    "table": Path(path).name,
                    "arch": arch,
                    "bucket": label,
                    "m": bucket_m(label),
                    "n": int(n) if n else GENERIC_NK,
                    "k": int(k) if k else GENERIC_NK,
                    "generic": n is None,
                    "class": [cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"], cfg["BLOCK_SIZE_K"], cfg["num_warps"]],
                    "num_stages": cfg.get("num_stages"),
                    "waves_per_eu": cfg.get("waves_per_eu"),
                    "matrix_instr_nonkdim": cfg.get("matrix_instr_nonkdim"),
                    "num_ksplit": cfg.get("NUM_KSPLIT", 1),
                    "split": "blind" if Path(path).name in BLIND_TABLES else "cal",
                }
            )
    doc = {
        "source": SOURCE,
        "commit": commit,
        "path": TABLE_DIR,
        "kernel": "aiter gemm_a16w16 (bf16)",
        "note": "labels derived from AMD's tuned tables (class and knobs per M bucket), not the tables",
        "entries": entries,
    }
    LABELS.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{len(entries)} entries from {commit[:12]} -> {LABELS}")


def class_times(target: str, entry: dict, classes: list[tuple]) -> dict[tuple, float]:
    from porter.tune import rank_gemm

    out = {}
    for cls in classes:
        bm, bn, bk, warps = cls
        variants = [
            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": warps, "num_stages": s, "GROUP_M": 8}
            for s in (2, 3)
        ]
        if target != "h200":
            variants = [
                {**v, "waves_per_eu": w, "matrix_instr_nonkdim": d} for v in variants for w in (0, 2) for d in (16, 32)
            ]
        # split-K as the tables' kernel runs it, the same slice counts for every class and both models
        variants = [{**v, "NUM_KSPLIT": s} for v in variants for s in KSPLITS]
        ranked = rank_gemm(target, "bf16", entry["m"], entry["n"], entry["k"], candidates=variants, top=1)
        out[cls] = ranked[0].predicted_ms if ranked else math.inf
    return out


def rank_of(order: list[tuple], wanted: tuple) -> int:
    return order.index(wanted) + 1


def score(entries: list[dict]) -> dict[str, dict[str, list[int]]]:
    vocab = {arch: sorted({tuple(e["class"]) for e in entries if e["arch"] == arch}) for arch in TARGETS}
    ranks: dict[str, dict[str, list[int]]] = {}
    for e in entries:
        arch, tuned, classes = e["arch"], tuple(e["class"]), vocab[e["arch"]]
        # the baseline counts calibration entries of other tables only (leave one table out)
        known = [x for x in entries if x["split"] == "cal" and x["table"] != e["table"] and x["arch"] == arch]
        local = Counter(tuple(x["class"]) for x in known if x["bucket"] == e["bucket"])
        overall = {arch: Counter(tuple(x["class"]) for x in known)}
        by_freq = sorted(classes, key=lambda c: (-local[c], -overall[arch][c], c))
        for name, target in (("amd_model", TARGETS[arch]), ("h200_model", "h200")):
            times = class_times(target, e, classes)
            order = sorted(classes, key=lambda c: (times[c], c))
            for group in (e["split"], f"{e['split']}/{arch}"):
                ranks.setdefault(group, {}).setdefault(name, []).append(rank_of(order, tuned))
        for group in (e["split"], f"{e['split']}/{arch}"):
            ranks[group].setdefault("frequency_baseline", []).append(rank_of(by_freq, tuned))
    return ranks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extract", type=Path, help="a ROCm/aiter git directory: rebuild the stored labels")
    args = parser.parse_args()
    if args.extract:
        extract(args.extract)
    doc = json.loads(LABELS.read_text(encoding="utf-8"))
    entries = doc["entries"]
    print(
        f"{len(entries)} tuned entries ({doc['kernel']}, {doc['source']} @ {doc['commit'][:12]}); "
        f"split-K in {sum(e['num_ksplit'] > 1 for e in entries)}, num_stages 3 in "
        f"{sum(e['num_stages'] == 3 for e in entries)}, BLOCK_M < 16 in {sum(e['class'][0] < 16 for e in entries)}"
    )
    for split, table in sorted(score(entries).items()):
        n = len(next(iter(table.values())))
        for name, ranks in table.items():
            print(
                f"{split:12s} n={n:3d} {name:18s} top-1 {sum(r == 1 for r in ranks) / n:5.1%}  "
                f"top-4 {sum(r <= 4 for r in ranks) / n:5.1%}  median rank {statistics.median(ranks):5.1f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
