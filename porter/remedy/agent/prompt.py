"""What the model is shown: what an expert porting engineer would look at for one finding.

The finding and its rule's documentation, the enclosing kernel or function, its call sites in the
repository, the target's facts from the target spec, and on a retry the exact failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.records import Finding
from porter.targets import Target

SYSTEM_PROMPT = """\
You are a GPU compiler engineer porting CUDA-flavoured PyTorch and Triton code to AMD Instinct GPUs.
Propose the smallest correct change that makes the flagged code right and fast on the target while it
keeps working on NVIDIA GPUs (choose the target's branch at run time) unless told the port is exclusive.

Answer ONLY with edit blocks of this exact form, one per change:

path/relative/to/repository.py
<<<<<<< SEARCH
the exact existing lines, copied verbatim, enough of them to match exactly once
=======
the new lines
>>>>>>> REPLACE

Rules: no line numbers, no diffs, no prose outside the blocks except a one-line summary first.
Edit only the files you are allowed to edit (listed in the request). To create the shim module,
use an empty SEARCH section. Never touch tests to make them pass.
"""

SHIM_SLOT_PROMPT = """\
No ready-made shim exists for this library. Fill the slots of the shim skeleton instead of writing
a free-form module. Answer with one block per slot:

<<<<<<< SLOT name
python code for the slot
>>>>>>> END

Slots: imports (module-level imports the branches need), target_branch (body of `def {function}({params})`
on the target), fallback (the same body for other platforms; usually the original library call).
"""


@dataclass
class FindingContext:
    finding: Finding
    rule_docs: dict = field(default_factory=dict)
    enclosing: str = ""  # source of the enclosing kernel or function
    enclosing_name: str = ""
    call_sites: list[str] = field(default_factory=list)
    allowed_files: list[str] = field(default_factory=list)


def target_facts_text(target: Target) -> str:
    """The target facts a kernel rewrite depends on, as a compact list."""
    mfma = "; ".join(
        f"{dtype}: " + ", ".join(f"{m}x{n}x{k} ({cycles} cyc)" for m, n, k, cycles in shapes)
        for dtype, shapes in target.mfma.items()
    )
    peaks = ", ".join(f"{dtype} {target.peak_tflops(dtype):.0f}" for dtype in target.matrix_flops_per_unit_clk)
    lines = [
        f"target: {target.name} ({target.arch}, {target.family}, {target.vendor})",
        f"wave size: {target.wave_size} lanes; max threads per block {target.max_threads_per_block}"
        f" (Triton num_warps <= {target.max_num_warps})",
        f"LDS/shared memory per block: {target.lds_bytes // 1024} KiB",
        f"compute units: {target.units}" + (f" over {target.xcds} XCDs, L2 private per XCD" if target.xcds > 1 else ""),
        f"HBM: {target.hbm_bytes / 1e9:.0f} GB at {target.hbm_gbps / 1000:g} TB/s",
        f"dense matrix peaks (TFLOP/s): {peaks}",
        f"fp8: {target.fp8_formats.get('e4m3')} (max {target.fp8_e4m3_max:g}), {target.fp8_formats.get('e5m2')}",
        f"TF32: {target.tf32}; Triton fp32 dot precisions: {', '.join(target.fp32_dot_precisions)}",
        "features: " + ", ".join(f"{name}={'yes' if on else 'no'}" for name, on in target.features.items()),
    ]
    if mfma:
        lines.append(f"matrix instructions: {mfma}")
    if target.triton.get("amd_options"):
        lines.append(
            f"Triton AMD options: {', '.join(target.triton['amd_options'])}; "
            f"num_stages {target.triton.get('gemm_num_stages')} for a GEMM, {target.triton.get('fused_num_stages')} for fused GEMMs"
        )
    return "\n".join(f"- {line}" for line in lines)


def enclosing_definition(source: str, line: int) -> tuple[str, str]:
    """(name, source) of the innermost function or class around a 1-based line, or ("", "")."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except cst.ParserSyntaxError:
        return "", ""
    positions = wrapper.resolve(PositionProvider)
    best: tuple[int, str, str] | None = None
    for node, where in positions.items():
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if where.start.line <= line <= where.end.line:
            span = where.end.line - where.start.line
            if best is None or span < best[0]:
                text = "\n".join(source.splitlines()[where.start.line - 1 : where.end.line])
                best = (span, node.name.value, text)
    return (best[1], best[2]) if best else ("", "")


def find_call_sites(files: dict[str, str], name: str, limit: int = 5) -> list[str]:
    """Lines that call or launch `name` (`name(` or `name[grid](`), with their file and line."""
    if not name:
        return []
    pattern = re.compile(rf"\b{re.escape(name)}\s*[\[(]")
    sites: list[str] = []
    for path in sorted(files):
        for number, text in enumerate(files[path].splitlines(), 1):
            if pattern.search(text) and not text.lstrip().startswith("def "):
                sites.append(f"{path}:{number}: {text.strip()}")
                if len(sites) >= limit:
                    return sites
    return sites


def build_context(finding: Finding, files: dict[str, str], rule_docs: dict, allowed: list[str]) -> FindingContext:
    name, enclosing = enclosing_definition(files.get(finding.path, ""), finding.line)
    return FindingContext(
        finding=finding,
        rule_docs=rule_docs,
        enclosing=enclosing,
        enclosing_name=name,
        call_sites=find_call_sites(files, name),
        allowed_files=sorted(allowed),
    )


def request_message(context: FindingContext, target: Target, exclusive: bool) -> str:
    finding = context.finding
    docs = context.rule_docs
    parts = [
        f"Finding {finding.rule} ({finding.name}, {finding.severity}) at {finding.path}:{finding.line}:{finding.column}",
        f"Message: {finding.message}",
    ]
    for key in ("what", "why", "use_instead"):
        if docs.get(key):
            parts.append(f"{key.replace('_', ' ').capitalize()}: {str(docs[key]).strip()}")
    parts.append("Target facts:\n" + target_facts_text(target))
    if context.enclosing:
        parts.append(
            f"Enclosing definition `{context.enclosing_name}` in {finding.path}:\n```python\n{context.enclosing}\n```"
        )
    else:
        parts.append(f"Flagged lines in {finding.path}:\n```python\n{finding.snippet}\n```")
    if context.call_sites:
        parts.append("Call sites:\n" + "\n".join(f"- {site}" for site in context.call_sites))
    parts.append("Files you may edit: " + ", ".join(context.allowed_files))
    parts.append(
        "The port is exclusive to the target: the NVIDIA branch may go."
        if exclusive
        else "Keep the code working on NVIDIA: branch on the backend at run time."
    )
    return "\n\n".join(parts)


def retry_message(failure: str) -> str:
    return (
        "Your previous proposal was rejected:\n"
        f"{failure}\n\n"
        "Answer again with corrected SEARCH/REPLACE blocks against the ORIGINAL files (your earlier edit was not kept)."
    )
