"""Benchmark `porter rewrite` on real open-source projects downloaded from PyPI (not a test).

    python bench/rewrite_bench.py [--target mi300x] [--packages liger-kernel unsloth ...] [--work DIR]

For each package: `pip download --no-deps` of its wheel, unpack, scan, plan patches, then for every
patch (applied with the patches it depends on) check that
  - it re-scans clean: the findings it addresses are gone and no rule gains findings,
  - each edited file still parses with libcst and compiles with compile().
Prints one table row per package (markdown). Needs network access to PyPI.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

import libcst as cst

from porter.analyze import analyze_source, load_rules
from porter.analyze.scan import scan_tree
from porter.remedy.patches import compose
from porter.remedy.planner import PlanOptions, plan_patches
from porter.targets import get_target

DEFAULT_PACKAGES = ("liger-kernel", "unsloth", "torchao", "fla-core", "flash-linear-attention")


def download(package: str, dest: Path) -> Path:
    """The package's wheel (pure-Python or the manylinux one), unpacked; Python files only are kept."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--quiet",
            "--dest",
            str(dest),
            package,
        ],
        check=True,
    )
    wheel = next(dest.glob("*.whl"))
    tree = dest / "tree"
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(".py") and ".dist-info/" not in name:
                archive.extract(name, tree)
    return tree


def _counts(text: str, path: str, target, ruleset) -> Counter:
    return Counter(f.rule for f in analyze_source(text, path, target, ruleset))


def _parses_and_compiles(text: str, path: str) -> tuple[bool, bool]:
    try:
        cst.parse_module(text)
        parsed = True
    except cst.ParserSyntaxError:
        parsed = False
    try:
        compile(text, path, "exec")
        compiled = True
    except SyntaxError:
        compiled = False
    return parsed, compiled


def _closure(patch, by_id) -> list[str]:
    seen: list[str] = []
    stack = list(patch.depends_on)
    while stack:
        current = stack.pop()
        if current not in seen and current in by_id:
            seen.append(current)
            stack.extend(by_id[current].depends_on)
    return seen


def check_patches(plan, target, ruleset) -> dict[str, int]:
    by_id = {p.id: p for p in plan.patches}
    clean = parse_ok = compile_ok = edited = 0
    unclean: Counter = Counter()  # "PT101 still flagged" / "PT110 -> new PT109" ...
    codemods = [p for p in plan.patches if p.rules]
    for patch in codemods:
        deps = _closure(patch, by_id)
        base, _ = compose(plan.patches, plan.originals, set(deps))
        after, skipped = compose(plan.patches, plan.originals, set(deps) | {patch.id})
        if patch.id in skipped:
            continue
        ok = True
        for edit in patch.edits:
            before_text = base.get(edit.path, plan.originals.get(edit.path, ""))
            new_text = after[edit.path]
            parsed, compiled = _parses_and_compiles(new_text, edit.path)
            edited += 1
            parse_ok += parsed
            compile_ok += compiled
            was, now = _counts(before_text, edit.path, target, ruleset), _counts(new_text, edit.path, target, ruleset)
            addressed = Counter(f.rule for f in patch.findings if f.path == edit.path)
            stayed = [rule for rule in addressed if now[rule] > was[rule] - addressed[rule]]
            new_rules = [rule for rule in now if now[rule] > was[rule]]
            unclean.update(f"{rule} still flagged" for rule in stayed)
            unclean.update(f"{'/'.join(patch.rules)} adds {rule}" for rule in new_rules)
            if not (parsed and compiled):
                unclean[f"{'/'.join(patch.rules)} breaks parsing"] += 1
            ok = ok and not stayed and not new_rules and parsed and compiled
        clean += ok
    return {
        "patches": len(codemods),
        "clean": clean,
        "edited": edited,
        "parse_ok": parse_ok,
        "compile_ok": compile_ok,
        "unclean": unclean,
    }


def run_one(package: str, work: Path, target, ruleset) -> dict:
    started = time.perf_counter()
    tree = download(package, work / package)
    result = scan_tree(tree, target, ruleset, use_cache=False)
    plan = plan_patches(tree, result.findings, target, PlanOptions())
    stats = check_patches(plan, target, ruleset)
    everything, skipped = compose(plan.patches, plan.originals, {p.id for p in plan.patches})
    all_compile = sum(_parses_and_compiles(text, path)[1] for path, text in everything.items())
    return {
        "package": package,
        "files": result.stats.files_seen,
        "findings": len(result.findings),
        "rules": len({f.rule for f in result.findings}),
        **stats,
        "review": len(plan.needs_review),
        "all_applied_files": len(everything),
        "all_applied_compile": all_compile,
        "not_composed": len(skipped),
        "seconds": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="mi300x")
    parser.add_argument("--packages", nargs="*", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--work", type=Path, default=None, help="download folder (default: a temporary one)")
    args = parser.parse_args(argv)
    target = get_target(args.target)
    ruleset = load_rules()
    work = args.work or Path(tempfile.mkdtemp(prefix="porter-rewrite-bench-"))
    print(f"porter rewrite benchmark, target {target.name} ({target.arch}), downloads in {work}\n")
    header = (
        "| package | .py files | findings | rules hit | patches | re-scan clean | edited files parse | "
        "edited files compile | needs review | all patches applied: files compile | seconds |"
    )
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    unclean: list[str] = []
    for package in args.packages:
        try:
            row = run_one(package, work, target, ruleset)
        except Exception as error:  # one broken download must not hide the others
            print(f"| {package} | error: {type(error).__name__}: {error} |")
            continue
        print(
            f"| {row['package']} | {row['files']} | {row['findings']} | {row['rules']} | {row['patches']} | "
            f"{row['clean']}/{row['patches']} | {row['parse_ok']}/{row['edited']} | {row['compile_ok']}/{row['edited']} | "
            f"{row['review']} | {row['all_applied_compile']}/{row['all_applied_files']} | {row['seconds']:.1f} |",
            flush=True,
        )
        reasons = [f"{row['package']}: {reason} x{count}" for reason, count in row["unclean"].most_common()]
        if reasons:  # printed as they come, so an interrupted run still explains its rows
            print("\n".join(f"  - {line}" for line in reasons), flush=True)
        unclean.extend(reasons)
    if unclean:
        print("\nWhy some patches do not re-scan clean:")
        print("\n".join(f"- {line}" for line in unclean))
    return 0


if __name__ == "__main__":
    sys.exit(main())
