"""Benchmark `porter scan` on real open-source Triton/PyTorch code (not part of the test suite).

Downloads wheels from PyPI with `pip download --no-deps` (cached under the temp dir), extracts
their Python sources and prints, per package and in total:
  files, lines, cold scan seconds (-j 1 and -j N), files/s and lines/s, libcst parse-only seconds
  of the same files (the floor), cold/parse ratio (goal <= 1.5), warm re-scan seconds and
  warm/cold (goal < 10%), findings.

    /work/venv/bin/python bench/scan_bench.py [--packages liger-kernel==0.8.5 ...] [--jobs N] [--profile]

`--installed torch/_inductor triton` instead copies those folders of the installed packages (the
issue-14 yardstick) and prints, in one run, the bare libcst parse of the same files in 2 processes,
the cold scan with 2 processes (project facts and reach included) and their ratio (goal <= 1.5):

    /work/venv/bin/python bench/scan_bench.py --installed torch/_inductor triton --rounds 2
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import libcst

from porter.analyze import load_rules
from porter.analyze.scan import chunked, parallel_map, scan_tree
from porter.config import PorterConfig
from porter.discover import DiscoverOptions, discover, kinds_for, read_source

DEFAULT_PACKAGES = ("liger-kernel==0.8.5", "flag-gems==5.0.2", "unsloth==2026.10.9")
CACHE = Path(tempfile.gettempdir()) / "porter-scan-bench"


def fetch(requirement: str) -> Path:
    """The package's sources, extracted from its wheel (downloaded once)."""
    name = requirement.split("==")[0].replace("-", "_")
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"{name}-*.whl"))
    if not found or "==" in requirement and not any(requirement.split("==")[1] in w.name for w in found):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-q",
                "-d",
                str(wheels),
                requirement,
            ],
            check=True,
        )
        found = sorted(wheels.glob(f"{name}-*.whl"))
    wheel = found[-1]
    source = CACHE / "src" / wheel.stem
    if not source.exists():
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(source)
    return source


def parse_only(root: Path, ruleset) -> tuple[float, int]:
    """Seconds to libcst-parse every file the scan reads (the floor any libcst analyzer pays)."""
    found = discover(root, DiscoverOptions(kinds=kinds_for(ruleset)))
    texts = [text for text in (read_source(source) for source in found.files) if isinstance(text, str)]
    started = time.perf_counter()
    for text in texts:
        try:
            libcst.parse_module(text)
        except Exception:
            pass
    return time.perf_counter() - started, len(texts)


def _parse_chunk(texts: list[str]) -> int:
    for text in texts:
        try:
            libcst.parse_module(text)
        except Exception:
            pass
    return len(texts)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (robust where other work shares the cores)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def parse_parallel(root: Path, ruleset, jobs: int) -> tuple[float, float]:
    """(wall, CPU) seconds to libcst-parse every file the scan reads, in `jobs` processes (chunked like the scan)."""
    found = discover(root, DiscoverOptions(kinds=kinds_for(ruleset)))
    texts = [text for text in (read_source(source) for source in found.files) if isinstance(text, str)]
    started, cpu = time.perf_counter(), cpu_seconds()
    list(parallel_map(_parse_chunk, chunked(texts, jobs, len), jobs, (None, None)))
    return time.perf_counter() - started, cpu_seconds() - cpu


def installed_copy(folders: list[str]) -> Path:
    """The named folders of installed packages (`torch/_inductor`, `triton`) copied under the bench cache."""
    target = CACHE / "installed" / "+".join(f.replace("/", "_") for f in folders)
    if not target.exists():
        for folder in folders:
            top, _, rest = folder.partition("/")
            spec = importlib.util.find_spec(top)
            if spec is None or not spec.submodule_search_locations:
                raise SystemExit(f"{top} is not installed")
            source = Path(list(spec.submodule_search_locations)[0]) / rest
            shutil.copytree(source, target / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return target


def measure_ratio(root: Path, ruleset, jobs: int, rounds: int) -> None:
    """Bare parse vs cold scan, both with `jobs` processes, interleaved `rounds` times (best of each)."""
    parses, colds, parse_cpu, cold_cpu = [], [], [], []
    for _ in range(rounds):
        wall, cpu = parse_parallel(root, ruleset, jobs)
        parses.append(wall)
        parse_cpu.append(cpu)
        cpu = cpu_seconds()
        cold, result = timed_scan(root, ruleset, jobs, fresh=True)
        colds.append(cold)
        cold_cpu.append(cpu_seconds() - cpu)
        print(
            f"  round: parse -j{jobs} {parses[-1]:.2f} s ({parse_cpu[-1]:.1f} CPU s), cold scan -j{jobs} {cold:.2f} s "
            f"({cold_cpu[-1]:.1f} CPU s), ratio {cold / parses[-1]:.2f} (CPU {cold_cpu[-1] / parse_cpu[-1]:.2f})",
            flush=True,
        )
    warm, _ = timed_scan(root, ruleset, jobs, fresh=False)
    stats = result.stats
    print(
        f"{root.name}: {stats.files_seen} files, {stats.lines} lines, {len(result.findings)} findings "
        f"({len(result.unreachable)} unreachable); bare libcst parse -j{jobs} {min(parses):.2f} s, "
        f"cold scan -j{jobs} {min(colds):.2f} s, ratio {min(colds) / min(parses):.2f} (goal <= 1.5; CPU seconds "
        f"{min(cold_cpu) / min(parse_cpu):.2f}); warm {warm:.2f} s"
    )


def timed_scan(root: Path, ruleset, jobs: int, fresh: bool):
    config = PorterConfig(cache_dir=".porter-cache")
    if fresh:
        shutil.rmtree(root / ".porter-cache", ignore_errors=True)
    started = time.perf_counter()
    result = scan_tree(root, "mi350x", ruleset, jobs=jobs, use_cache=True, config=config)
    return time.perf_counter() - started, result


def measure(root: Path, ruleset, jobs: int) -> dict:
    parse_s, parsed = parse_only(root, ruleset)
    cold1_s, result = timed_scan(root, ruleset, 1, fresh=True)
    warm_s, warm = timed_scan(root, ruleset, 1, fresh=False)
    coldn_s, _ = timed_scan(root, ruleset, jobs, fresh=True)
    stats = result.stats
    assert [f.sort_key() for f in warm.findings] == [f.sort_key() for f in result.findings]
    return {
        "files": stats.files_seen,
        "parsed": parsed,
        "lines": stats.lines,
        "analyzed": stats.analyzed,
        "cold1": cold1_s,
        "coldn": coldn_s,
        "parse": parse_s,
        "warm": warm_s,
        "findings": len(result.findings),
        "hits": warm.stats.cache_hits,
    }


def row(name: str, m: dict, jobs: int) -> str:
    return (
        f"{name:<26} {m['files']:>6} {m['lines']:>8} {m['analyzed']:>8} {m['parse']:>8.2f} {m['cold1']:>8.2f} "
        f"{m['cold1'] / max(m['parse'], 1e-9):>6.2f} {m['files'] / m['cold1']:>7.0f} {m['lines'] / m['cold1']:>8.0f} "
        f"{m['coldn']:>8.2f} {m['warm']:>7.2f} {100 * m['warm'] / m['cold1']:>6.1f}% {m['findings']:>8}"
    )


HEADER = (
    f"{'package':<26} {'files':>6} {'lines':>8} {'analyzed':>8} {'parse s':>8} {'cold s':>8} "
    f"{'c/p':>6} {'files/s':>7} {'lines/s':>8} {'cold -jN':>8} {'warm s':>7} {'w/c':>7} {'findings':>8}"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile one cold -j 1 scan of the last package (or of the --installed copy)",
    )
    parser.add_argument("--installed", nargs="+", help="folders of installed packages, e.g. torch/_inductor triton")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved parse/scan rounds for --installed")
    args = parser.parse_args()
    ruleset = load_rules()
    if args.installed:
        jobs = args.jobs if "--jobs" in sys.argv else 2
        measure_ratio(installed_copy(args.installed), ruleset, jobs, args.rounds)
        if args.profile:
            profile(installed_copy(args.installed), ruleset)
        return 0
    print(
        f"rules: {len(getattr(ruleset, 'rules', []) or [])}, cold -jN uses {args.jobs} processes; "
        "parse = libcst.parse_module only, in one process; c/p = cold(-j 1)/parse; w/c = warm/cold(-j 1)"
    )
    print(HEADER)
    total: dict = {}
    for requirement in args.packages:
        root = fetch(requirement)
        measured = measure(root, ruleset, args.jobs)
        print(row(requirement, measured, args.jobs), flush=True)
        for key, value in measured.items():
            total[key] = total.get(key, 0) + value
    print(row("TOTAL", total, args.jobs))
    if args.profile:
        profile(fetch(args.packages[-1]), ruleset)
    return 0


def profile(root: Path, ruleset) -> None:
    shutil.rmtree(root / ".porter-cache", ignore_errors=True)
    profiler = cProfile.Profile()
    profiler.enable()
    scan_tree(root, "mi350x", ruleset, jobs=1, use_cache=False, config=PorterConfig())
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    sys.exit(main())
