"""Per-phase CPU seconds of one cold `porter scan -j 2` of the issue-14 yardstick (not part of the test suite).

Wraps the scan's phases with CPU timers (in the pool workers too: each worker writes its totals to a
temporary file after every module), then prints the parent's and each worker's totals:

    /work/venv/bin/python bench/scan_phases.py [--installed torch/_inductor triton] [--jobs 2]

facts = the project-facts walk of each module's `ast` (its parse, and value flow's launch keys from the same
tree, are the rest of those workers' process CPU); parse primary = libcst parse of the files the
rules analyse; parse foreign = value flow's libcst loads of other modules (helpers, callers);
matcher.run = every rule's entries and visitors (caller_sites included); may_set_in = value flow's
caller filter when the facts pass did not answer it.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import libcst

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scan_bench import installed_copy, parse_parallel, timed_scan  # noqa: E402

from porter.analyze import engine, load_rules  # noqa: E402
from porter.analyze import scan as scan_module  # noqa: E402
from porter.analyze.triton import flow  # noqa: E402

TOTALS: collections.defaultdict[str, float] = collections.defaultdict(float)
OUT = Path(tempfile.mkdtemp(prefix="porter-scan-phases-"))
_FOREIGN = [0]


def timed(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            TOTALS[name] += time.process_time() - started

    return wrapper


def dump_totals() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    TOTALS["process CPU"] = usage.ru_utime + usage.ru_stime
    (OUT / f"{os.getpid()}.json").write_text(json.dumps(TOTALS))


def instrument() -> None:
    parse = libcst.parse_module

    def timed_parse(text, *args, **kwargs):
        started = time.process_time()
        try:
            return parse(text, *args, **kwargs)
        finally:
            TOTALS["parse foreign" if _FOREIGN[0] else "parse primary"] += time.process_time() - started

    libcst.parse_module = timed_parse  # flow's foreign loads reach it through porter.analyze.triton
    engine.cst.parse_module = timed_parse
    load = flow.load

    def foreign_load(path):
        _FOREIGN[0] += 1
        try:
            return load(path)
        finally:
            _FOREIGN[0] -= 1

    flow.load = foreign_load
    flow._may_set_in = timed("may_set_in", flow._may_set_in)
    flow.caller_sites = timed("caller_sites", flow.caller_sites)
    engine.build_index = timed("build_index", engine.build_index)
    engine._Matcher.run = timed("matcher.run", engine._Matcher.run)
    engine._analyze = timed("analyze (all of it)", engine._analyze)
    facts, analyze_one = scan_module.module_facts, scan_module._analyze_one

    def module_facts(*args, **kwargs):
        out = timed("facts", facts)(*args, **kwargs)
        dump_totals()
        return out

    def one(item):
        out = analyze_one(item)
        dump_totals()
        return out

    scan_module.module_facts, scan_module._analyze_one = module_facts, one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--installed", nargs="+", default=["torch/_inductor", "triton"])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    root, ruleset = installed_copy(args.installed), load_rules()
    _, parse_cpu = parse_parallel(root, ruleset, args.jobs)
    instrument()
    before = resource.getrusage(resource.RUSAGE_SELF)
    wall, result = timed_scan(root, ruleset, args.jobs, fresh=True)
    after = resource.getrusage(resource.RUSAGE_SELF)
    parent = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    files = [p for p in sorted(OUT.glob("*.json")) if p.stem != str(os.getpid())]  # this process: `parent`
    print(f"bare libcst parse -j{args.jobs}: {parse_cpu:.2f} CPU s; cold scan -j{args.jobs}: {wall:.1f} s wall")
    print(f"  this process (reading, triage, cache, reach; in-process work): {parent:.2f} CPU s")
    summed: collections.Counter[str] = collections.Counter()
    for path in files:
        worker = json.loads(path.read_text())
        summed.update(worker)
        shown = {k: round(v, 2) for k, v in sorted(worker.items(), key=lambda kv: -kv[1])}
        print(f"  worker {path.stem}: {shown}")
    print("  all workers: " + ", ".join(f"{k} {v:.2f}" for k, v in summed.most_common()))
    scan_cpu = parent + summed["process CPU"]
    print(f"  {len(result.findings)} findings; scan {scan_cpu:.2f} CPU s / bare parse: {scan_cpu / parse_cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
