"""Visitors over Triton kernel code and the Triton APIs it calls: PT102, PT109..PT115, PT117, PT118."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeGuard

import libcst as cst

from porter.analyze.triton.inventory import walk
from porter.analyze.visitors import Hit, ModuleContext, register
from porter.analyze.visitors.triton_common import (
    calls,
    in_try_handling,
    keyword_arg,
    references,
    skip_for_target,
    uses_triton,
)
from porter.records import Severity

_WARPISH = re.compile(r"warp|lane", re.IGNORECASE)
_WARP_SIZE_NAME = re.compile(
    r"^(warp_?size|threads_?per_?warp|lanes?_?per_?warp|warp_?width|num_?lanes)$", re.IGNORECASE
)
_LANE_OPS = {
    cst.Multiply: 32,
    cst.FloorDivide: 32,
    cst.Modulo: 32,
    cst.Divide: 32,
    cst.BitAnd: 31,
    cst.RightShift: 5,
    cst.LeftShift: 5,
}


def _mentions_warp(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Name) and _WARPISH.search(n.value) for n in walk(node))


def _assigned_name(inv, node: cst.CSTNode) -> str:
    """Name the expression is directly assigned to (`lane_id = tid % 32`), else ''."""
    parent = inv.parent(node)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    return ""


def _warps_from_threads(inv, node: cst.BinaryOperation) -> bool:
    """`x // 32` inside the arithmetic that gives a launch its num_warps (`num_warps=BLOCK // 32 // (16 // size)`,
    xgrammar's bitmask kernel): threads counted in 32-lane warps, twice the waves' lanes on wave64 (2048 threads
    for fp32 logits there, OutOfResources). A clamp (`min(16, n // 32)`) is a call and ends the climb: not matched."""
    if not isinstance(node.operator, (cst.FloorDivide, cst.Divide)) or not _int_literal(node.right, 32):
        return False
    child, parent = node, inv.parent(node)
    while isinstance(parent, cst.BinaryOperation) and child is parent.left:
        child, parent = parent, inv.parent(parent)
    return isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "num_warps"


def _int_literal(node: cst.CSTNode, value: int) -> TypeGuard[cst.Integer]:
    return isinstance(node, cst.Integer) and node.evaluated_value == value


_NVIDIA_DSLS = ("cutlass",)  # CuTe DSL (cutlass.cute): NVIDIA-only by construction, never runs on AMD


def _nvidia_dsl_module(ctx: ModuleContext) -> bool:
    """The module imports an NVIDIA-only kernel DSL outside a try/except ImportError: its warp-size
    arithmetic is about NVIDIA warps, and the file needs a rewrite, not a 32 -> wave-size fix."""
    guarded = ctx.index.guarded_imports
    return any(name.split(".", 1)[0] in _NVIDIA_DSLS and id(node) not in guarded for node, name in ctx.index.imports)


@register("triton_warp_size_32")
def warp_size_32(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT102: 32-lane arithmetic: `WARP_SIZE = 32`, `num_warps * 32`, `lane % 32`, `lane = tl.arange(0, 32)`.
    Conservative: the 32 must sit next to a warp/lane name."""
    inv = ctx.triton
    if inv is None or _nvidia_dsl_module(ctx) or not uses_triton(ctx):
        return
    for node in inv.nodes_of(cst.Assign, cst.AnnAssign, cst.Param, cst.Arg, cst.BinaryOperation):
        hit: tuple[cst.Integer, str] | None = None
        if isinstance(node, cst.Assign) and _int_literal(node.value, 32):
            if any(isinstance(t.target, cst.Name) and _WARP_SIZE_NAME.match(t.target.value) for t in node.targets):
                hit = (node.value, "assign")
        elif isinstance(node, cst.AnnAssign) and node.value is not None and _int_literal(node.value, 32):
            if isinstance(node.target, cst.Name) and _WARP_SIZE_NAME.match(node.target.value):
                hit = (node.value, "assign")
        elif isinstance(node, cst.Param) and node.default is not None and _int_literal(node.default, 32):
            if _WARP_SIZE_NAME.match(node.name.value):
                hit = (node.default, "default")
        elif isinstance(node, cst.Arg) and node.keyword is not None and _int_literal(node.value, 32):
            if _WARP_SIZE_NAME.match(node.keyword.value):
                hit = (node.value, "keyword")
        elif isinstance(node, cst.BinaryOperation) and type(node.operator) in _LANE_OPS:
            literal = _LANE_OPS[type(node.operator)]
            for number, other in ((node.right, node.left), (node.left, node.right)):
                if _int_literal(number, literal) and (
                    _mentions_warp(other) or _WARPISH.search(_assigned_name(inv, node))
                ):
                    hit = (number, "binop")
                    break
        elif (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and inv.matches(node.value.func, {"triton.language.arange"})
        ):
            args = node.value.args
            if (
                len(args) == 2
                and _int_literal(args[1].value, 32)
                and any(isinstance(t.target, cst.Name) and _WARPISH.search(t.target.value) for t in node.targets)
            ):
                hit = (args[1].value, "arange")
        if hit is None or skip_for_target(inv.guard_at(hit[0]), target):
            continue
        expr = node if hit[1] == "binop" else hit[0]
        # a parameter default is what callers that pass nothing get: worth a look, not proof of a bug
        yield Hit(
            hit[0],
            {
                "value": hit[0].evaluated_value,
                "form": hit[1],
                "expr": inv.code(expr).strip(),
                "wave_size": target.wave_size,
            },
            severity="warning" if hit[1] == "default" else None,
        )


@register("triton_warps_from_threads")
def warps_from_threads(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT123: `num_warps=BLOCK // 32 // ...` at a launch: warps counted in 32 lanes, launched as 64-lane waves."""
    inv = ctx.triton
    if inv is None or _nvidia_dsl_module(ctx) or not uses_triton(ctx):
        return
    for node in inv.nodes_of(cst.BinaryOperation):
        if not _warps_from_threads(inv, node) or skip_for_target(inv.guard_at(node), target):
            continue
        yield Hit(node.right, {"expr": inv.code(node).strip(), "wave_size": target.wave_size})


# PTX instruction -> a portable Triton replacement (for the codemod; None: needs a person or the agent).
PTX_PORTABLE = {
    "tanh.approx.f32": "libdevice.tanh",
    "ex2.approx.f32": "tl.exp2",
    "ex2.approx.ftz.f32": "tl.exp2",
    "lg2.approx.f32": "tl.log2",
    "lg2.approx.ftz.f32": "tl.log2",
    "rcp.approx.f32": "tl.fdiv(1.0, x)",
    "rcp.approx.ftz.f32": "tl.fdiv(1.0, x)",
    "rsqrt.approx.f32": "tl.rsqrt",
    "rsqrt.approx.ftz.f32": "tl.rsqrt",
    "sqrt.approx.f32": "tl.sqrt",
    "sqrt.approx.ftz.f32": "tl.sqrt",
    "sin.approx.f32": "tl.sin",
    "cos.approx.f32": "tl.cos",
    "sin.approx.ftz.f32": "tl.sin",
    "cos.approx.ftz.f32": "tl.cos",
    "cvt.rn.bf16x2.f32": "x.to(tl.bfloat16)",
    "cvt.rn.f16x2.f32": "x.to(tl.float16)",
    "cvt.rn.bf16.f32": "x.to(tl.bfloat16)",
    "cvt.rn.f16.f32": "x.to(tl.float16)",
    "cvt.rna.tf32.f32": None,
    "mov.u32": None,
}
_PTX_INSN = re.compile(r"(?<![\w.%$])([a-z][a-z0-9]*(?:\.[a-z0-9]+)+)\b")
_PTX_MARKERS = re.compile(r"%(laneid|tid|ntid|ctaid|warpid|smid|clock)|\.reg\s|\{\s*\.reg|\$\d+", re.IGNORECASE)
_AMDGCN = re.compile(r"\b(v|s)_[a-z0-9_]+\b")
# FP4/FP6 and UE8M0 conversions (cvt ... .e2m1x2 / .e2m3x2 / .e3m2x2 / .ue8m0x2) need sm_100a or later (PTX ISA):
# they fail on Hopper and Ampere too, so the code reaching them is Blackwell-gated on NVIDIA's side already
# (capability >= 10, cuda_capability_geq(10), an FP4 backend registered for CUDA only), and gfx942 / gfx950, which
# report (9, 4) / (9, 5), do not pass that gate. Every such labelled finding (fbgemm, modelopt, fastvideo,
# gemlite, torchao, aphrodite) was false.
_BLACKWELL_ONLY_PTX = re.compile(r"\.(e2m1x2|e2m3x2|e3m2x2|ue8m0x2)\b")


@register("triton_inline_ptx")
def inline_ptx(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT109: tl.inline_asm_elementwise with PTX text; the recognised instruction goes to data["ptx_op"]."""
    inv = ctx.triton
    if inv is None:
        return
    for call in calls(inv, {"triton.language.inline_asm_elementwise"}):
        if skip_for_target(inv.guard_at(call), target):
            continue
        asm_node = keyword_arg(call, "asm") or (call.args[0] if call.args else None)
        constraints_node = keyword_arg(call, "constraints") or (call.args[1] if len(call.args) > 1 else None)
        asm = inv.fold(asm_node.value).single if asm_node else None
        constraints = inv.fold(constraints_node.value).single if constraints_node else None
        if isinstance(asm, str) and _AMDGCN.search(asm) and not _PTX_INSN.search(asm.replace("v_", "")):
            continue  # AMDGCN assembly: already ported
        if isinstance(asm, str) and _BLACKWELL_ONLY_PTX.search(asm):
            continue  # behind NVIDIA's own Blackwell gate, which the AMD targets fail
        ops = _PTX_INSN.findall(asm) if isinstance(asm, str) else []
        known = next((op for op in ops if op in PTX_PORTABLE), None)
        portable = PTX_PORTABLE.get(known) if known else None
        yield Hit(
            call,
            {
                "ptx_op": known,
                "ptx_ops": ops,
                "asm": asm if isinstance(asm, str) else None,
                "constraints": constraints if isinstance(constraints, str) else None,
                "portable": portable,
                "fix_hint": "codemod" if portable else "agent",
                "op": known or (ops[0] if ops else "unrecognised asm"),
            },
        )


_LIBDEVICE_CUDA = "triton.language.extra.cuda"
CUDA_ONLY_MEMBERS = ("globaltimer", "smid", "convert_custom_float8")
# @core.builtin constexprs read from the compile options (extra/cuda/utils.py): no libdevice, no PTX, fine on HIP.
# num_threads() is num_warps * 32, half a wave64's lanes, a sizing matter rather than a compile error.
BACKEND_NEUTRAL_MEMBERS = frozenset({"num_warps", "num_threads"})
_GDC = ("gdc_wait", "gdc_launch_dependents")


@register("triton_libdevice_cuda")
def libdevice_cuda(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT110: `triton.language.extra.cuda` (NVIDIA libdevice, globaltimer, smid...) instead of the
    backend-neutral `triton.language.extra.libdevice`."""
    inv = ctx.triton
    if inv is None:
        return
    uses = list(references(inv, (_LIBDEVICE_CUDA,)))
    used = {qualified for _, qualified in uses}
    for node in inv.nodes_of(cst.ImportFrom, cst.Import):
        if isinstance(node, cst.ImportFrom) and node.module is not None:
            module = inv.code(node.module)
            if module.startswith(_LIBDEVICE_CUDA) or (module == "triton.language.extra" and _imports(node, "cuda")):
                imported = [] if isinstance(node.names, cst.ImportStar) else [inv.code(a.name) for a in node.names]
                if skip_for_target(inv.guard_at(node), target) or inv.in_import_fallback(node):
                    continue
                if imported and BACKEND_NEUTRAL_MEMBERS.issuperset(imported):
                    continue
                if imported and _never_used(
                    ctx, [f"{module}.{name}" for name in imported], _local_names(inv, node), used
                ):
                    continue
                data = {
                    "module": module,
                    "member": ", ".join(imported) or "*",
                    "portable": all(n == "libdevice" for n in imported) and bool(imported),
                    "form": "import",
                }
                bound = [f"{module}.{name}" for name in imported]
                yield Hit(node, data | _use_sites(ctx, inv, bound, _local_names(inv, node), uses))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if (
                    inv.code(alias.name).startswith(_LIBDEVICE_CUDA)
                    and not skip_for_target(inv.guard_at(node), target)
                    and not inv.in_import_fallback(node)
                    and not (
                        alias.asname and _never_used(ctx, [inv.code(alias.name)], [inv.code(alias.asname.name)], used)
                    )
                ):
                    data = {
                        "module": inv.code(alias.name),
                        "member": inv.code(alias.name).rsplit(".", 1)[1],
                        "portable": inv.code(alias.name).endswith("libdevice"),
                        "form": "import",
                    }
                    bound = [inv.code(alias.name)] if alias.asname else []
                    local = [inv.code(alias.asname.name)] if alias.asname else []
                    yield Hit(node, data | _use_sites(ctx, inv, bound, local, uses))
    for node, qualified in references(inv, (_LIBDEVICE_CUDA + ".",)):
        member = qualified[len(_LIBDEVICE_CUDA) + 1 :].split(".")[0]
        explicit = inv.code(node).startswith(("tl.", "triton."))
        if member in _GDC or member in BACKEND_NEUTRAL_MEMBERS or skip_for_target(inv.guard_at(node), target):
            continue  # gdc_*: PT113
        if explicit or member.startswith(CUDA_ONLY_MEMBERS):
            yield Hit(
                node,
                {"module": _LIBDEVICE_CUDA, "member": member, "portable": member == "libdevice", "form": "attribute"},
            )


def _never_used(ctx: ModuleContext, bound: list[str], locals_: list[str], used: set[str]) -> bool:
    """No name this import binds is read in the module, which re-exports none of them (not a package's __init__, not
    named in `__all__`, which is what a star import takes): extra.cuda only fails when a kernel calls one of its __nv_
    functions, so an import left over from the NVIDIA code compiles nothing (fp8-coat's quantizers, held_out8; its
    gelu_fwd.py, whose `__all__` lists only fp8_gelu_forward)."""
    if ctx.path.endswith("__init__.py") or any(_listed_in_all(ctx.text, name) for name in locals_):
        return False
    return not any(q == b or q.startswith(b + ".") for q in used for b in bound)


def _use_sites(ctx: ModuleContext, inv, bound: list[str], locals_: list[str], uses: list) -> dict:
    """{"reached_through": [[line, column]...]} of the reads of the names an import binds, where they are all the module's
    own (it re-exports nothing): extra.cuda loads on the HIP build and fails only where a kernel calls an __nv_
    function, so the import matters where its names are used, and the project analysis decides the finding's
    reach from theirs (COAT's `libdevice.signbit`, used only under a STOCHASTIC constexpr no default run sets).
    Empty where the import binds a module other code may reach through (`import x.y.cuda`) or is re-exported
    (a package's `__init__`, a name listed in `__all__`)."""
    if not bound or ctx.path.endswith("__init__.py") or any(_listed_in_all(ctx.text, name) for name in locals_):
        return {}
    spans = [
        inv.span(node)
        for node, qualified in uses
        if any(qualified == b or qualified.startswith(b + ".") for b in bound)
    ]
    sites = [[span.line, span.column] for span in spans]
    return {"reached_through": sites} if sites else {}


def _local_names(inv, node: cst.ImportFrom) -> list[str]:
    """The names a `from m import a, b as c` binds in the module (a, c)."""
    if isinstance(node.names, cst.ImportStar):
        return []
    return [inv.code(a.asname.name) if a.asname else inv.code(a.name) for a in node.names]


def _listed_in_all(text: str, name: str) -> bool:
    """Does the module name `name` in its `__all__` (a quoted string anywhere after `__all__`)?"""
    start = text.find("__all__")
    return start >= 0 and re.search(rf"""['"]{re.escape(name)}['"]""", text[start:]) is not None


def _imports(node: cst.ImportFrom, name: str) -> bool:
    return not isinstance(node.names, cst.ImportStar) and any(
        isinstance(a.name, cst.Name) and a.name.value == name for a in node.names
    )


@register("triton_cache_hints")
def cache_hints(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT111: PTX cache-operator / eviction hints on tl.load / tl.store (tunables, not portable facts)."""
    inv = ctx.triton
    if inv is None:
        return
    for call in calls(inv, {"triton.language.load", "triton.language.store"}):
        for keyword in ("cache_modifier", "eviction_policy"):
            arg = keyword_arg(call, keyword)
            if arg is None or skip_for_target(inv.guard_at(call), target):
                continue
            value = inv.fold(arg.value).single
            if value in ("", None):
                continue
            yield Hit(arg, {"keyword": keyword, "value": value if isinstance(value, str) else inv.code(arg.value)})


_DRIVER_UTILS = "triton.runtime.driver.active.utils"
# the host utilities that fill a CUtensorMap: the CUDA driver's utils module has them, the HIP driver's has not
_TMA_FILLS = ("fill_1d_tma_descriptor", "fill_2d_tma_descriptor")
_TMA_OLD = (
    "triton.tools.experimental_descriptor",
    "triton.language._experimental_descriptor_load",
    "triton.language._experimental_descriptor_store",
    "triton.language._experimental_reinterpret_tensor_descriptor",
    *(f"{_DRIVER_UTILS}.{fill}" for fill in _TMA_FILLS),
)
# _experimental_make_tensor_descriptor is Triton 3.3's name of the device-side tl.make_tensor_descriptor (no
# driver utility): code aliases it under hasattr (fla, flag-gems), and it lowers like the new API on AMD.
_TMA_NEW = (
    "triton.language.make_tensor_descriptor",
    "triton.language._experimental_make_tensor_descriptor",
    "triton.tools.tensor_descriptor",
    "triton.language.load_tensor_descriptor",
    "triton.language.store_tensor_descriptor",
)


@register("triton_tma_descriptors")
def tma_descriptors(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT112: the experimental TMA descriptor API (NVIDIA driver utilities): an error at every use."""
    inv = ctx.triton
    if inv is None or target.features.get("tma"):
        return
    for node, qualified in references(inv, _TMA_OLD):
        if not skip_for_target(inv.guard_at(node), target) and not _probe_or_fallback(inv, node):
            yield Hit(node, {"api": "experimental", "name": qualified})
    for node in inv.nodes_of(cst.Assert):
        fill = _asserted_tma_fill(inv, node.test)
        if fill and not skip_for_target(inv.guard_at(node), target):
            yield Hit(node, {"api": "experimental, asserted present", "name": f"{_DRIVER_UTILS}.{fill}"})


def _asserted_tma_fill(inv, test: cst.BaseExpression) -> str | None:
    """`assert hasattr(triton.runtime.driver.active.utils, "fill_1d_tma_descriptor")`: a requirement, which fails
    on the HIP driver (an `if hasattr(...)` is a probe, and its other branch is what runs there)."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr"):
        return None
    if len(test.args) != 2 or not isinstance(test.args[1].value, cst.SimpleString):
        return None
    name = test.args[1].value.evaluated_value
    return name if name in _TMA_FILLS and inv.matches(test.args[0].value, {_DRIVER_UTILS}) else None


@register("triton_tensor_descriptors")
def tensor_descriptors(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT120 (opt-in): the tensor-descriptor API on a target without TMA. It compiles and runs there
    (Triton 3.9 lowers descriptor loads to pointer loads for gfx942 and gfx950, measured), so one note
    per function (its first use) says only that the TMA design brings no gain."""
    inv = ctx.triton
    if inv is None or target.features.get("tma"):
        return
    first_use: dict[int, Hit] = {}
    for node, qualified in references(inv, _TMA_NEW):
        if skip_for_target(inv.guard_at(node), target) or _probe_or_fallback(inv, node):
            continue
        function = inv.enclosing_function(node)
        hit = first_use.get(id(function))
        if hit is None:
            first_use[id(function)] = Hit(
                node,
                {
                    "api": "tensor-descriptor",
                    "name": qualified,
                    "uses": 1,
                    "function": function.name.value if function else None,
                },
            )
        else:
            hit.data["uses"] += 1
    yield from first_use.values()


def _probe_or_fallback(inv, node: cst.CSTNode) -> bool:
    """`TensorDescriptor = None` (import fallback) and `if TensorDescriptor is None:` are not uses."""
    parent = inv.parent(node)
    if isinstance(parent, cst.AssignTarget):
        return True
    return (
        isinstance(parent, cst.Comparison)
        and parent.left is node
        and all(
            isinstance(c.operator, (cst.Is, cst.IsNot))
            and isinstance(c.comparator, cst.Name)
            and c.comparator.value == "None"
            for c in parent.comparisons
        )
    )


@register("triton_warp_specialization")
def warp_specialization(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT113: Config(num_consumer_groups= / num_buffers_warp_spec=) and programmatic dependent launch device
    calls (tl.extra.cuda.gdc_*). Not tl.range(warp_specialize=): a loop attribute the HIP backend ignores (Triton
    3.9 compiles such a loop for gfx942 and gfx950 as a plain one, no warp-specialized partitions), so the kernel
    is right there; all six labelled findings of it over the real-code splits were false."""
    inv = ctx.triton
    if inv is None or target.features.get("warp_specialization"):
        return
    for node, qualified in references(inv, tuple(f"{_LIBDEVICE_CUDA}.{g}" for g in _GDC)):
        if not skip_for_target(inv.guard_at(node), target):
            yield Hit(node, {"feature": "pdl", "name": qualified.rsplit(".", 1)[1]}, severity="error")
    for call in calls(inv, {"triton.Config", "triton.runtime.Config"}):
        for keyword in ("num_consumer_groups", "num_buffers_warp_spec"):
            arg = keyword_arg(call, keyword)
            if arg is not None and not skip_for_target(inv.guard_at(call), target):
                yield Hit(arg, {"feature": "warp_specialize", "name": keyword})


@register("triton_tf32_dot")
def tf32_dot(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT114: tl.dot input_precision values the target does not accept ("tf32" on gfx950, "tf32x3" on AMD).
    A default fp32 dot is not reported: it runs as ieee on gfx950, the precise result fp32 operands ask for
    (bench/real_code: 0 true of 3 labelled, the info form was dropped). Nor is the deprecated allow_tf32=True:
    tl.dot turns it into "tf32" only where the backend lists tf32, else "ieee" (triton/language/core.py dot()),
    so it never fails to compile (held_out5: 0 true of 6 labelled on mi350x)."""
    inv = ctx.triton
    if inv is None:
        return
    allowed = list(target.fp32_dot_precisions)
    for call in calls(inv, {"triton.language.dot"}):
        if skip_for_target(inv.guard_at(call), target):
            continue
        precision = keyword_arg(call, "input_precision")
        if precision is None:
            continue
        base = {"allowed": ", ".join(allowed), "suggested": target.best_fp32_dot_precision}
        for p in inv.fold(precision.value).possibles or ():
            if isinstance(p.value, str) and p.value not in allowed:
                yield Hit(p.node, {**base, "precision": p.value, "keyword": "input_precision", "form": "explicit"})


# Triton fp8 dtypes: family and the same format's twin in the other family.
_FP8 = {
    "float8e4nv": ("ocp", "e4m3"),
    "float8e5": ("ocp", "e5m2"),
    "float8e4b8": ("fnuz", "e4m3"),
    "float8e5b16": ("fnuz", "e5m2"),
    "float8e4b15": ("nvidia", "e4m3"),
}
_TORCH_TO_TRITON = {
    "float8_e4m3fn": "float8e4nv",
    "float8_e5m2": "float8e5",
    "float8_e4m3fnuz": "float8e4b8",
    "float8_e5m2fnuz": "float8e5b16",
}


@register("triton_fp8_dtypes")
def fp8_dtypes(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT115: Triton fp8 dtypes of the other family than the target's native one (target.fp8_family). OCP on an
    FNUZ target only where the value is a tl.dot operand (an MFMA input): an OCP conversion that is stored or
    decoded back is correct there (NVFP4/MX block scales are OCP E4M3 by the format's definition)."""
    inv = ctx.triton
    if inv is None:
        return
    prefixes = tuple(f"triton.language.{name}" for name in _FP8)
    scopes: dict[int, tuple[list, list]] = {}  # one walk per scope, however many fp8 references it holds
    for node, qualified in references(inv, prefixes):
        dtype = qualified.rsplit(".", 1)[1]
        if dtype not in _FP8 or skip_for_target(inv.guard_at(node), target) or _compared(inv, node):
            continue
        family, fmt = _FP8[dtype]
        if family == target.fp8_family or (family == "nvidia" and target.vendor == "nvidia"):
            continue
        if _table_entry_or_bitcast(inv, node):
            continue
        if family == "ocp" and not _dot_operand(inv, ctx.module, node, scopes):
            continue  # a scale, a stored or round-tripped value: the OCP conversion is right on every target
        suggested = _TORCH_TO_TRITON.get(target.fp8_formats.get(fmt, ""), None)
        severity: Severity
        if family == "fnuz" and target.vendor == "amd":
            severity = "warning"  # gfx950: FNUZ dot operands deprecated / emulated
        else:
            severity = "error"
        yield Hit(
            node,
            {
                "dtype": dtype,
                "family": family,
                "suggested": f"tl.{suggested}" if suggested else None,
                "target_family": target.fp8_family,
            },
            severity=severity,
        )


def _dot_operand(inv, module: cst.Module, node: cst.CSTNode, scopes: dict[int, tuple[list, list]]) -> bool:
    """The fp8 dtype `node` makes a tl.dot operand in its scope: `tl.dot(a.to(FP8), b)`, or through names bound to
    the dtype (`FP8 = tl.float8e4nv`, a parameter default) or to a value converted to it (`a8 = a.to(FP8)`).
    Arithmetic, another `.to()` and a dot end the fp8 value (their results are wider types)."""
    scope, aliases = _dtype_aliases(inv, module, node)
    assignments, dots = _assignments_and_dots(inv, scope, scopes)
    if not dots:
        return False  # most scopes: no tl.dot, nothing to trace
    values: set[str] = set()
    for _ in range(3):  # a chain of renames: a8 = a.to(FP8); a8t = tl.trans(a8)
        for assignment in assignments:
            if assignment.value is not None and _fp8_value(inv, assignment.value, node, aliases, values):
                values.update(_bound_names(assignment))
    for call in dots:
        operands = [a.value for a in call.args[:2] if a.keyword is None]
        operands += [a.value for a in call.args if a.keyword and a.keyword.value in ("input", "other")]
        if any(_fp8_value(inv, operand, node, aliases, values) for operand in operands):
            return True
    return False


def _assignments_and_dots(inv, scope: cst.CSTNode, scopes: dict[int, tuple[list, list]]) -> tuple[list, list]:
    """The assignments and tl.dot calls of a scope, walked once per visitor run."""
    if id(scope) not in scopes:
        nodes = list(walk(scope))
        assignments = [n for n in nodes if isinstance(n, (cst.Assign, cst.AnnAssign))]
        dots = [n for n in nodes if isinstance(n, cst.Call) and inv.matches(n.func, {"triton.language.dot"})]
        scopes[id(scope)] = (assignments, dots)
    return scopes[id(scope)]


def _dtype_aliases(inv, module: cst.Module, node: cst.CSTNode) -> tuple[cst.CSTNode, set[str]]:
    """The scope to search (the function around the reference, else the module) and the names bound to the dtype:
    an assignment of it (or of a conditional choosing it), or a parameter whose default it is."""
    parent = inv.parent(node)
    while isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
        parent = inv.parent(parent)
    if isinstance(parent, cst.Param):
        function = inv.parent(inv.parent(parent))
        while function is not None and not isinstance(function, cst.FunctionDef):
            function = inv.parent(function)
        return (function or module), {parent.name.value}
    scope = inv.enclosing_function(node) or module
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        return scope, set(_bound_names(parent))
    return scope, set()


def _bound_names(assignment: cst.Assign | cst.AnnAssign) -> list[str]:
    targets = [t.target for t in assignment.targets] if isinstance(assignment, cst.Assign) else [assignment.target]
    return [t.value for t in targets if isinstance(t, cst.Name)]


def _fp8_value(inv, expr: cst.CSTNode, dtype: cst.CSTNode, aliases: set[str], values: set[str]) -> bool:
    """`expr` evaluates to an fp8 value of `dtype` (a conversion to it, or a name holding one)."""
    if isinstance(expr, cst.Name):
        return expr.value in values
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return False  # arithmetic on fp8 promotes to a wider type
    if isinstance(expr, cst.Call):
        if inv.matches(expr.func, {"triton.language.dot"}):
            return False
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to" and expr.args:
            first = expr.args[0].value
            return first is dtype or (isinstance(first, cst.Name) and first.value in aliases)
    return any(_fp8_value(inv, child, dtype, aliases, values) for child in expr.children)


def _table_entry_or_bitcast(inv, node: cst.CSTNode) -> bool:
    """The dtype is the value of a table entry keyed by a torch fp8 dtype (`{torch.float8_e4m3fn: tl.float8e4nv}`:
    each tensor gets its own format's type), or the target of a bitcast (`x.to(tl.float8e4nv, bitcast=True)`:
    stored bytes decoded in the format that wrote them). Neither picks a format for the target."""
    parent = inv.parent(node)
    if isinstance(parent, cst.DictElement) and parent.key is node:
        return True  # a dtype -> format-name/torch table (kt-kernel's dot_scaled formats): a lookup, no fp8 value
    if isinstance(parent, cst.Index):
        return True  # `mapping[tl.float8e4b8] = e4m3_dtype`: a table key (tritonblas' tl -> torch map)
    if isinstance(parent, cst.DictElement) and parent.value is node:
        keyed_by_torch = any(q.startswith("torch.float8_") for q in inv.qnames(parent.key))
        table = inv.parent(parent)
        return keyed_by_torch or _holds_both_families(inv, table) or _dtype_name_table(inv, table)
    if isinstance(parent, cst.Arg) and isinstance(call := inv.parent(parent), cst.Call):
        bitcast = keyword_arg(call, "bitcast")
        return bitcast is not None and inv.fold(bitcast.value).single is True
    return False


def _holds_both_families(inv, table: cst.CSTNode | None) -> bool:
    """A dict whose values include OCP and FNUZ fp8 dtypes (tritonparse's name-to-dtype table, bench/real_code): a
    lookup of every format by its name, not a choice of one format for the device."""
    if not isinstance(table, cst.Dict):
        return False
    families = set()
    for element in table.elements:
        if isinstance(element, cst.DictElement):
            for qualified in inv.qnames(element.value):
                dtype = qualified.removeprefix("triton.language.")
                if dtype in _FP8:
                    families.add(_FP8[dtype][0])
    return {"ocp", "fnuz"} <= families


def _dtype_name_table(inv, table: cst.CSTNode | None) -> bool:
    """A dict from string names to Triton dtypes only (`{'fp16': tl.float16, 'fp8': tl.float8e4b8}`): a lookup of
    shorthand names (tritonblas, bench/real_code held_out5), not a choice of one format for the device."""
    if not isinstance(table, cst.Dict) or not table.elements:
        return False
    for element in table.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            return False
        if not any(q.startswith("triton.language.") for q in inv.qnames(element.value)):
            return False
    return True


def _compared(inv, node: cst.CSTNode) -> bool:
    """The dtype is an operand of a comparison (`if dtype == tl.float8e4nv:`, `dtype in (tl.float8e5, ...)`):
    a dispatch test, not a value made on the target (flashinfer's clamp bounds, bench/real_code), also when wrapped
    in `tl.constexpr(...)` (kt-kernel flexpoint's max_finite table)."""
    for ancestor in inv.ancestors(node):
        if isinstance(ancestor, cst.Comparison):
            return True
        if isinstance(ancestor, (cst.Arg, cst.Call)) and _constexpr_wrapper(inv, ancestor, node):
            continue
        if not isinstance(ancestor, (cst.ComparisonTarget, cst.Tuple, cst.List, cst.Set, cst.Element, cst.BaseCompOp)):
            return False
    return False


def _constexpr_wrapper(inv, ancestor: cst.CSTNode, node: cst.CSTNode) -> bool:
    """`ancestor` is part of `tl.constexpr(node)`: the dtype wrapped as a constexpr, the same dtype."""
    call = inv.parent(ancestor) if isinstance(ancestor, cst.Arg) else ancestor
    return (
        isinstance(call, cst.Call)
        and inv.matches(call.func, {"triton.language.constexpr"})
        and len(call.args) == 1
        and call.args[0].value is node
    )


_GROUP = re.compile(r"^GROUP(_SIZE)?_?[MN]$", re.IGNORECASE)
_XCD = re.compile(r"xcd", re.IGNORECASE)


@register("triton_xcd_tile_order")
def xcd_tile_order(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT117 (info): grouped or persistent GEMM tile order with no XCD remap, on parts whose L2 is per XCD."""
    inv = ctx.triton
    if inv is None or target.l2_scope != "xcd" or target.xcds <= 1:
        return
    for kernel in inv.kernels:
        if not kernel.gemm_like:
            continue
        body_names = {n.value for n in walk(kernel.node) if isinstance(n, cst.Name)}
        if any(_XCD.search(name) for name in body_names):
            continue
        pids = [
            c
            for c in walk(kernel.node.body)
            if isinstance(c, cst.Call) and inv.matches(c.func, {"triton.language.program_id"})
        ]
        if not pids:
            continue
        grouped = any(_GROUP.match(name) for name in body_names)
        persistent = any(
            isinstance(n, cst.For)
            and isinstance(n.iter, cst.Call)
            and len(n.iter.args) >= 3
            and inv.matches(n.iter.func, {"triton.language.range"})
            and any(
                isinstance(x, cst.Name) and re.search(r"sm|cu|program", x.value, re.I)
                for x in walk(n.iter.args[2].value)
            )
            for n in walk(kernel.node.body)
        )
        if not (grouped or persistent):
            continue
        yield Hit(
            pids[0], {"kernel": kernel.name, "pattern": "persistent" if persistent else "grouped", "xcds": target.xcds}
        )


_NVSMI = (
    "triton.testing.nvsmi",
    "triton.testing.get_max_tensorcore_tflops",
    "triton.testing.get_max_simd_tflops",
    "triton.testing.get_dram_gbps",
)


@register("triton_testing_nvsmi")
def testing_nvsmi(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT118: triton.testing helpers that shell out to nvidia-smi or model NVIDIA SMs."""
    inv = ctx.triton
    if inv is None:
        return
    for node, qualified in references(inv, _NVSMI):
        if qualified in _NVSMI and not skip_for_target(inv.guard_at(node), target) and not _failure_handled(inv, node):
            yield Hit(node, {"name": qualified.rsplit(".", 1)[1]})


# What a missing nvidia-smi (FileNotFoundError, an OSError) or a helper's stub (NotImplementedError) raises.
_NVSMI_FAILURES = re.compile(
    r"\b(FileNotFoundError|OSError|EnvironmentError|NotImplementedError|RuntimeError|"
    r"Exception|BaseException|CalledProcessError|SubprocessError)\b"
)


def _failure_handled(inv, node: cst.CSTNode) -> bool:
    """The call sits in the body of a `try` whose handler catches its failure on AMD (xformers' perf model:
    `try: nvsmi(...) except FileNotFoundError: <fallback>`): the fallback is what runs there."""
    return in_try_handling(inv, node, lambda h: h.type is None or bool(_NVSMI_FAILURES.search(inv.code(h.type))))


_REDUCING_ATOMICS = {f"triton.language.atomic_{op}" for op in ("add", "max", "min", "and", "or", "xor")}
_SYNC_ATOMICS = {"triton.language.atomic_cas", "triton.language.atomic_xchg"}


def _synchronises_through_memory(inv, kernel: cst.FunctionDef) -> bool:
    """A kernel that spins (`while`) or swaps/compares atomically orders memory between programs: its
    atomics may need acquire/release, so relaxed is not a safe suggestion there."""
    inside = {id(n) for n in walk(kernel)}
    return any(id(c) in inside for c in inv.calls_to(_SYNC_ATOMICS)) or any(
        isinstance(n, cst.While) for n in walk(kernel)
    )


def _many_atomics_per_program(inv, call: cst.Call, kernel: cst.FunctionDef) -> bool:
    """The atomic is a masked block (a scatter, a split-K tile, a gradient row) or sits in a loop: each program
    fences the L2 many times. A lone unmasked atomic after the loops (`tl.atomic_add(out_ptr, acc)`) is one
    fence per program, small next to the kernel (bench/real_code: every such case was labelled debatable)."""
    if keyword_arg(call, "mask") is not None or len(call.args) >= 3:
        return True
    for ancestor in inv.ancestors(call):
        if ancestor is kernel:
            return False
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
    return False


@register("triton_atomic_default_sem")
def atomic_default_sem(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT121: a reducing `tl.atomic_*` statement without `sem=`, whose old value is discarded (a split-K sum,
    an amax): Triton's default acq_rel fences the cache around every such atomic on CDNA."""
    inv = ctx.triton
    if inv is None:
        return
    for call in calls(inv, _REDUCING_ATOMICS):
        kernel = inv.enclosing_function(call)
        if keyword_arg(call, "sem") is not None or not isinstance(inv.parent(call), cst.Expr) or kernel is None:
            continue  # explicit semantics, or the old value is read (a counter, a ticket): ordering may matter
        if skip_for_target(inv.guard_at(call), target) or _synchronises_through_memory(inv, kernel):
            continue
        if not _many_atomics_per_program(inv, call, kernel):
            continue  # one scalar update per program (a final sum, an amax): the fence costs little
        op = next(q for q in sorted(inv.qnames(call.func)) if q in _REDUCING_ATOMICS).rsplit(".", 1)[1]
        yield Hit(call, {"op": op, "kernel": kernel.name.value})
