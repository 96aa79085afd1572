"""Visitors for PyTorch rules (PT2xx) whose condition YAML cannot state."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any

import libcst as cst

from porter.analyze.guards import only_on_cuda
from porter.analyze.index import literal_value
from porter.analyze.visitors import CONDITION_PARTS, Hit, ModuleContext, register
from porter.analyze.visitors.triton_common import defines_triton_kernels

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
}


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below `node` (small subtrees only: the engine's index covers whole modules)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in current.children:
            stack.append(child)


# ---- PT201: torch.version.cuda used as a condition or parsed --------------------------------------

_VERSION_PARSERS = {
    "Version",
    "parse",
    "LooseVersion",
    "StrictVersion",
    "parse_version",
    "int",
    "float",
    "tuple",
    "map",
}


@register("torch_version_cuda_use")
def torch_version_cuda_use(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for node in [*ctx.nodes(cst.Attribute), *ctx.nodes(cst.Name)]:
        tail = node.attr.value if isinstance(node, cst.Attribute) else node.value
        if tail != "cuda" or "torch.version.cuda" not in ctx.qualified_names(node):
            continue
        use = _version_use(ctx, node)
        if use and not _called_only_on_cuda(ctx, node):
            yield Hit(node, {"use": use, "qualified_name": "torch.version.cuda", **_calls_on_rocm(ctx, node)})
    yield from _gpu_choices_by_cuda_build(ctx)


def _calls_on_rocm(ctx: ModuleContext, node: cst.CSTNode) -> dict[str, Any]:
    """The module's calls of the function holding the use that are not behind a CUDA-only test: where the AMD build
    reaches the parse (deepspeed's `is_cuda_enable` calling `assert_no_cuda_mismatch` outside its ROCm check), the
    line a port guards. Empty when the use is not in a function, or the module never calls it."""
    function = _enclosing_function(ctx, node)
    if function is None:
        return {"called_from": ""}
    name = function.name.value
    lines = sorted(
        {
            ctx.position(call).start.line
            for call in ctx.nodes(cst.Call)
            if _tail(call.func) == name
            and not only_on_cuda(ctx, call)
            and all(a is not function for a in ctx.ancestors(call))
        }
    )
    if not lines:
        return {"called_from": ""}
    where = ", ".join(map(str, lines))
    return {
        "called_from": f" (in `{name}`, called on line{'s' if len(lines) > 1 else ''} {where} outside any CUDA-only test)",
        "called_on": [{"line": line} for line in lines],
    }


# ---- PT201: the GPU chosen by a CUDA-build test, with no ROCm branch ------------------------------

_GPU_CHOICES = frozenset({"cuda", "nccl"})  # what a ROCm build must choose too: its device type, RCCL's backend name


def _gpu_choices_by_cuda_build(ctx: ModuleContext) -> Iterator[Hit]:
    """`if _is_cuda(): return torch.device("cuda", rank)` where `_is_cuda()` is `torch.version.cuda is not None`
    (xDiT's envs.py): the test is false on ROCm, so a chain with no ROCm branch sends the AMD GPU to the CPU, to
    another vendor's device or to a raise. The finding is the test, the line a port changes."""
    predicates = _cuda_build_predicates(ctx)
    for statement in ctx.nodes(cst.If):
        call = statement.test
        if not (
            isinstance(call, cst.Call)
            and not call.args
            and isinstance(call.func, cst.Name)
            and call.func.value in predicates
        ) and not _is_cuda_build_test(ctx, call):
            continue
        if not _picks_gpu(statement.body) or _chain_tests_rocm(ctx, statement) or only_on_cuda(ctx, statement):
            continue
        name = ctx.code_for(call)
        yield Hit(
            call,
            {
                "use": f"tested (`{name}`) to choose the GPU in a chain without a ROCm branch",
                "qualified_name": name,
                "called_from": "",
            },
        )


def _cuda_build_predicates(ctx: ModuleContext) -> set[str]:
    """Module-level functions without parameters that return a CUDA-build test of torch.version.cuda (directly or
    through a local: `has_cuda = torch.version.cuda is not None; return has_cuda`)."""
    found = set()
    for function in ctx.nodes(cst.FunctionDef):
        if function.params.params or not ctx.is_top_level(function):
            continue
        tests = {}
        returned = None
        for small in _small_statements(function.body):
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target = small.targets[0].target
                if isinstance(target, cst.Name):
                    tests[target.value] = small.value
            elif isinstance(small, cst.Return) and small.value is not None:
                returned = small.value
        if isinstance(returned, cst.Name):
            returned = tests.get(returned.value)
        if returned is not None and _is_cuda_build_test(ctx, returned):
            found.add(function.name.value)
    return found


def _is_cuda_build_test(ctx: ModuleContext, test: cst.BaseExpression) -> bool:
    """`torch.version.cuda` or `torch.version.cuda is not None`: true on a CUDA build only."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        item = test.comparisons[0]
        if not (isinstance(item.operator, cst.IsNot) and isinstance(item.comparator, cst.Name)):
            return False
        test = test.left if item.comparator.value == "None" else test
    return isinstance(test, cst.Attribute) and "torch.version.cuda" in ctx.qualified_names(test)


def _picks_gpu(body: cst.BaseSuite) -> bool:
    """The branch returns or binds the GPU's name: "cuda", torch.device("cuda", ...), the "nccl" backend."""
    for small in _small_statements(body):
        value = small.value if isinstance(small, (cst.Return, cst.Assign)) else None
        if value is None:
            continue
        if isinstance(value, cst.Call) and value.args:
            value = value.args[0].value  # torch.device("cuda", rank)
        if isinstance(value, cst.SimpleString) and value.evaluated_value in _GPU_CHOICES:
            return True
    return False


def _small_statements(body: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement]:
    """The simple statements (assignments, returns) directly in a block, not those of nested blocks."""
    for line in getattr(body, "body", ()):
        if isinstance(line, cst.SimpleStatementLine):
            yield from line.body


def _chain_tests_rocm(ctx: ModuleContext, statement: cst.If) -> bool:
    """Does the if/elif chain holding `statement` name ROCm anywhere (`if _is_hip(): ... elif _is_cuda():`): then
    the port is done or the choice is deliberate."""
    head: cst.CSTNode = statement
    while isinstance(ctx.parent(head), cst.If) and ctx.parent(head).orelse is head:  # type: ignore[union-attr]
        head = ctx.parent(head)  # type: ignore[assignment]
    code = ctx.code_for(head)
    return "hip" in code.lower() or "rocm" in code.lower()


def _called_only_on_cuda(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The enclosing function is called in this module, and only from CUDA-only branches (deepspeed's
    `if not self.is_rocm_pytorch(): assert_no_cuda_mismatch(...)`): the use never runs on ROCm."""
    function = _enclosing_function(ctx, node)
    if function is None:
        return False
    name = function.name.value
    calls = [call for call in ctx.nodes(cst.Call) if _tail(call.func) == name]
    return bool(calls) and all(only_on_cuda(ctx, call) for call in calls)


def _version_use(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    if _rejects_rocm(ctx, node):
        return "required (None raises)"
    use = _parse_or_compare(ctx, node)
    if use is None and isinstance(
        ctx.parent(node), (cst.BooleanOperation, cst.UnaryOperation, cst.If, cst.While, cst.IfExp, cst.Assert)
    ):
        return "tested" if _gates_on_cuda_version(ctx, node) else None
    return use


def _parse_or_compare(ctx: ModuleContext, node: cst.CSTNode) -> str | None:
    parent = ctx.parent(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return "parsed"  # torch.version.cuda.split(".") raises on ROCm (None)
    if _concatenated(parent):
        return "concatenated"  # "CUDA " + torch.version.cuda: str + None raises TypeError on ROCm
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        func = call.func if isinstance(call, cst.Call) else None
        tail = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        return "parsed" if tail in _VERSION_PARSERS else None
    if isinstance(parent, cst.ComparisonTarget) or isinstance(parent, cst.Comparison):
        comparison = parent if isinstance(parent, cst.Comparison) else ctx.parent(parent)
        if not isinstance(comparison, cst.Comparison):
            return None
        ops = [type(c.operator) for c in comparison.comparisons]
        if all(op in (cst.Is, cst.IsNot) for op in ops):
            return None  # `torch.version.cuda is not None`: an explicit platform test, right on ROCm
        return "compared"
    return None


def _concatenated(parent: cst.CSTNode | None) -> bool:
    """An operand of `+` or `+=` (string building): None there raises TypeError, where an f-string, `%` or
    `str.format` would print "None"."""
    if isinstance(parent, cst.BinaryOperation):
        return isinstance(parent.operator, cst.Add)
    return isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign)


def _rejects_rocm(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`if ... torch.version.cuda is None: raise` / `assert torch.version.cuda`: ROCm builds refused.

    The check that refuses to import on ROCm (torch.version.cuda is None there while the GPU works);
    a test whose branch only skips or logs is a platform test and stays unflagged.
    """
    part, parent = node, ctx.parent(node)
    while isinstance(parent, CONDITION_PARTS):
        part, parent = parent, ctx.parent(parent)
    if isinstance(parent, cst.Assert) and parent.test is part:
        return "version.hip" not in ctx.code_for(part)
    if not (isinstance(parent, cst.If) and parent.test is part):
        return False
    if "version.hip" in ctx.code_for(part):
        return False  # `cuda is None and hip is None`: refuses only builds with no GPU runtime at all
    if not _none_means_true(ctx, node):
        return False
    body = parent.body.body if isinstance(parent.body, cst.IndentedBlock) else [parent.body]
    return any(isinstance(small, cst.Raise) for statement in body for small in getattr(statement, "body", ()))


def _none_means_true(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """True when the test holds for a missing CUDA version: `cuda is None`, `not cuda`."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return True
    if isinstance(parent, cst.Comparison) and parent.left is node:
        return any(
            isinstance(c.operator, cst.Is) and isinstance(c.comparator, cst.Name) and c.comparator.value == "None"
            for c in parent.comparisons
        )
    return False


def _gates_on_cuda_version(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`torch.version.cuda and Version(torch.version.cuda) >= ...`: a GPU fast path that ROCm silently skips.

    A bare truthiness test (`x if torch.version.cuda else y`, `IS_CUDA = ... and torch.version.cuda`,
    `torch.version.cuda or "n/a"`) is a platform test, the very thing to write on ROCm: no finding.
    """
    chain = node
    parent = ctx.parent(chain)
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        chain, parent = parent, ctx.parent(parent)
    for other in descendants(chain):
        if other is node or not isinstance(other, cst.Attribute) or other.attr.value != "cuda":
            continue
        if "torch.version.cuda" in ctx.qualified_names(other) and _parse_or_compare(ctx, other):
            return True
    return False


# ---- PT202: compute-capability comparisons -------------------------------------------------------

_CAPABILITY = "torch.cuda.get_device_capability"


@register("capability_comparison")
def capability_comparison(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """Capability gates that send `target` down a branch meant for NVIDIA parts with features it lacks.

    The gate is evaluated on the target (ROCm's synthetic capability) and on every capability an NVIDIA
    part could report. When all NVIDIA parts that take the target's branch are at or above the first
    NVIDIA target (porter.targets) having a feature the AMD target lacks (TMA, wgmma... on Hopper), the
    branch may use those features: a finding. `major >= 8` (Ampere: bf16, true on Instinct too),
    `cap == (9, 0)` (false on gfx942/gfx950) or `cap >= (10, 0)` send the target where pre-Hopper NVIDIA
    parts go as well, which is fine.
    """
    floor, missing, nvidia = _feature_floor(target)
    if floor is None:
        return
    aliases = _capability_names(ctx)
    for comparison in ctx.nodes(cst.Comparison):
        left = comparison.left
        for item in comparison.comparisons:
            op = _COMPARE.get(type(item.operator))
            for side, other, side_op in ((left, item.comparator, op), (item.comparator, left, _flip(op))):
                part = _capability_part(ctx, side, aliases)
                value = literal_value(other)
                if part is None or side_op is None or value is None:
                    continue
                if part == "capability" and _amd_capability(value):
                    break  # (9, 4) / (9, 5) name gfx942 / gfx950: a gate written for ROCm's own tuples
                admits = _elif_admits(ctx, comparison, aliases)
                hit = _capability_hit(comparison, part, side_op, value, target, floor, missing, nvidia, admits)
                if (
                    hit is not None
                    and hit.data["outcome"] == "true"
                    and _and_partner_false(ctx, comparison, aliases, target)
                ):
                    break  # `major == 9 and minor == 0`: the minor test turns (9, 4) / (9, 5) away
                if hit is not None and _branch_shared_below(ctx, comparison, aliases, target, floor, nvidia, hit):
                    break  # `major > 8 or (major == 8 and minor >= 9)`: Ada's fp8 gate, not a Hopper one
                if hit is not None and not _harmless_branch(ctx, comparison, hit.data["outcome"] == "true"):
                    turns_on = _turns_on(ctx, comparison, target)
                    if turns_on is None:
                        break  # nothing the gate turns on breaks on the target: a workspace size, a dtype list...
                    hit.data["turns_on"] = turns_on
                    exit_data = _platform_exit(ctx, comparison)
                    if exit_data.get("covers_rocm"):
                        break  # the probe already returns before the gate on ROCm (the port is done)
                    hit.data.update(exit_data)
                    hit.data.update(_branch_lines(ctx, comparison, hit.data["outcome"] == "true"))
                    yield hit
                break
            left = item.comparator


def _branch_lines(ctx: ModuleContext, comparison: cst.Comparison, taken: bool) -> dict[str, dict[str, int]]:
    """Where the gate's `if` sits in its chain, as lines the report can point at: the chain's first test
    (`chain`, for an elif: where a port puts its ROCm branch) and, when the target takes the branch, its body
    (`taken`: lmdeploy's `elif cap[0] < 10:` hands gfx942's major 9 Hopper's tile table on the next line)."""
    statement = _gate_statement(ctx, comparison)
    if not isinstance(statement, cst.If):
        return {}
    data: dict[str, dict[str, int]] = {}
    head, parent = statement, ctx.parent(statement)
    while isinstance(parent, cst.If) and parent.orelse is head:
        head, parent = parent, ctx.parent(parent)
    if head is not statement:
        data["chain"] = {"line": ctx.position(head).start.line}
    body = getattr(statement.body, "body", ())
    if taken and body:
        data["taken"] = {"line": ctx.position(body[0]).start.line, "end_line": ctx.position(body[-1]).end.line}
    return data


def _elif_admits(ctx: ModuleContext, comparison: cst.Comparison, aliases) -> Callable[[tuple], bool] | None:
    """For the test of an `elif` in a chain of capability tests (`if cap[0] < 8: ... elif cap[0] < 9: ...
    elif cap[0] < 10:`), the capabilities that reach it: those for which every earlier test is False. None when the
    comparison is not in an elif's test or an earlier test is not made of capability comparisons."""
    node: cst.CSTNode = comparison
    parent = ctx.parent(node)
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        node, parent = parent, ctx.parent(parent)
    if not isinstance(parent, cst.If) or parent.test is not node:
        return None
    earlier, current = [], parent
    above = ctx.parent(current)
    while isinstance(above, cst.If) and above.orelse is current:
        earlier.append(above.test)
        current, above = above, ctx.parent(above)
    if not earlier or any(_value_on(ctx, test, aliases, (8, 0)) is None for test in earlier):
        return None
    return lambda capability: not any(_value_on(ctx, test, aliases, capability) for test in earlier)


def _branch_shared_below(ctx: ModuleContext, comparison: cst.Comparison, aliases, target, floor, nvidia, hit) -> bool:
    """The whole boolean test the gate is part of sends a pre-Hopper NVIDIA part down the target's branch too
    (`cap[0] > 8 or (cap[0] == 8 and cap[1] >= 9)` admits Ada's (8, 9)): the branch needs no Hopper feature. True
    (no finding) when that part is below NVIDIA's fp8 capability or the target's fp8 is OCP (gfx950 runs the OCP
    fp8 path Ada does); on an FNUZ target (gfx942) the finding stays and names OCP fp8 as what the target lacks."""
    lowest = _lowest_on_same_branch(ctx, comparison, aliases, target, floor)
    if lowest is None or lowest >= floor:
        return False
    fp8_since = min(
        (tuple(c) for t in nvidia for c in t.extra.get("feature_capability", {}).get("fp8", [])), default=None
    )
    if fp8_since is None or lowest < fp8_since or target.fp8_family == "ocp":
        return True
    hit.data["missing"] = f"OCP fp8: its fp8 is {target.fp8_family.upper()}"
    return False


def _lowest_on_same_branch(ctx: ModuleContext, comparison: cst.Comparison, aliases, target, floor) -> tuple | None:
    """The lowest NVIDIA capability for which the boolean test holding the comparison (through and / or / not)
    has the value it has on the target; None when the comparison stands alone or the test holds anything but
    capability comparisons."""
    top: cst.CSTNode = comparison
    parent = ctx.parent(top)
    while isinstance(parent, cst.BooleanOperation) or (
        isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
    ):
        top, parent = parent, ctx.parent(parent)
    if top is comparison:
        return None
    on_target = _value_on(ctx, top, aliases, tuple(target.capability))
    if on_target is None:
        return None
    same = [c for c in _probe_capabilities(floor) if _value_on(ctx, top, aliases, c) == on_target]
    return min(same, default=None)


def _value_on(ctx: ModuleContext, node: cst.CSTNode, aliases: Any, capability: tuple) -> bool | None:
    """A test made of capability comparisons joined by and / or / not, evaluated on one capability."""
    if isinstance(node, cst.BooleanOperation):
        left = _value_on(ctx, node.left, aliases, capability)
        right = _value_on(ctx, node.right, aliases, capability)
        if left is None or right is None:
            return None
        return (left and right) if isinstance(node.operator, cst.And) else (left or right)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = _value_on(ctx, node.expression, aliases, capability)
        return None if inner is None else not inner
    return _comparison_on(ctx, node, aliases, capability)


def _and_partner_false(ctx: ModuleContext, comparison: cst.Comparison, aliases: Any, target: Any) -> bool:
    """Another capability comparison and-ed with this one is false on the target: the whole test is false, so
    the target does not take the branch the gate alone would send it down."""
    node: cst.BaseExpression = comparison
    parent = ctx.parent(node)
    while isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
        node, parent = parent, ctx.parent(parent)
    if node is comparison:
        return False
    return any(
        _comparison_on(ctx, partner, aliases, tuple(target.capability)) is False
        for partner in and_operands(node)
        if partner is not comparison
    )


def and_operands(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of a chain of `and`s (`a and b and c` -> a, b, c); any other node alone."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        yield from and_operands(node.left)
        yield from and_operands(node.right)
    else:
        yield node


def _comparison_on(ctx: ModuleContext, node: cst.CSTNode, aliases: Any, capability: Any) -> bool | None:
    """The value of a single capability comparison on one capability, None when it is not one."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    item = node.comparisons[0]
    op, value = _COMPARE.get(type(item.operator)), literal_value(item.comparator)
    part = _capability_part(ctx, node.left, aliases)
    if op is None or value is None or part is None:
        return None
    return _outcome(op, _part_of(capability, part), value)


# What a capability gate turns on that breaks on AMD, named in the function holding the gate (its name, docstring,
# body) or, at module level, in the gate's statement: Hopper-only hardware (TMA and tensor descriptors, wgmma,
# clusters, NVLS multicast), NVIDIA-only kernel stacks (Gluon's NVIDIA layouts, CuTe / CUTLASS / quack, DeepGEMM,
# FA3's flash_attn_interface) and PTX. On the real-code corpus the gates with none of these chose something benign
# on AMD (a cuBLAS workspace size, a dtype allow-list, fp8 casts around collectives, an autotune list the
# autotuner prunes, the conservative path): on mi300x 0 true of 19 labelled (11 false, 8 debatable), against 8
# true, 1 false and 1 debatable of the 10 with one.
_HOPPER_ONLY = re.compile(
    r"tma\b|tma_|tensor_?descriptor|wgmma|cluster|multimem|nvls|multicast|gluon|\bcute\b|cutlass|quack|deep_?gemm"
    r"|flash_attn_interface|\bptx\b|inline_asm|setmaxnreg|warp_?speciali[sz]",
    re.IGNORECASE,
)
# torch._scaled_mm is hipBLASLt on ROCm, which takes only FNUZ fp8 on gfx942: an OCP fp8 GEMM the gate enables fails
_VENDOR_FP8_GEMM = re.compile(r"_scaled_mm")
# A fixed launch table the gate picks (`BLOCK_M, BLOCK_N, num_warps, num_stages = _kernel_meta_sm9x(...)`): no
# autotuner drops a Hopper tile that overflows the target's LDS (lmdeploy's flash attention, ported with a HIP case)
_LAUNCH_VALUES = {"num_warps", "num_stages"}
# A switch for the project's own compiled kernels (`self.ns_use_kernels = ...`, quack's CuTe GEMMs behind it)
_KERNEL_SWITCH = re.compile(r"use_\w*kernel", re.IGNORECASE)


def _turns_on(ctx: ModuleContext, comparison: cst.Comparison, target: Any) -> str | None:
    """What the gate turns on that breaks on the target, as the message names it; None when nothing does."""
    function = _enclosing_function(ctx, comparison)
    statement = _gate_statement(ctx, comparison)
    text = ctx.code_for(function if function is not None else statement)
    feature = _HOPPER_ONLY.search(text)
    if feature:
        return f"`{feature.group(0)}`"
    if target.fp8_family == "fnuz" and _VENDOR_FP8_GEMM.search(text):
        return "torch._scaled_mm on OCP fp8"
    assigned = _assigned_names(statement) if isinstance(statement, cst.If) else set()
    launch = sorted(assigned & _LAUNCH_VALUES)
    if launch:
        return f"a fixed launch table ({', '.join(launch)})"
    switch = next((name for name in sorted(assigned) if _KERNEL_SWITCH.search(name)), None)
    if switch:
        return f"the project's own kernels (`{switch}`)"
    return None


def _gate_statement(ctx: ModuleContext, comparison: cst.Comparison) -> cst.CSTNode:
    """The `if` whose test holds the gate, else the statement holding it."""
    node: cst.CSTNode = comparison
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, cst.If) and parent.test is node:
            return parent
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return parent
        node, parent = parent, ctx.parent(parent)
    return node


def _assigned_names(statement: cst.CSTNode) -> set[str]:
    """The names and attributes an `if` statement's branches assign (`a, b = ...`, `self.flag = ...`)."""
    names: set[str] = set()
    for assign in (node for node in descendants(statement) if isinstance(node, cst.Assign)):
        for target in assign.targets:
            elements = target.target.elements if isinstance(target.target, cst.Tuple) else [target.target]
            for element in elements:
                value = element.value if isinstance(element, cst.Element) else element
                if isinstance(value, cst.Name):
                    names.add(value.value)
                elif isinstance(value, cst.Attribute):
                    names.add(value.attr.value)
    return names


_ROCM_TEST = re.compile(r"\bhip\b|is_hip|is_rocm|rocm|torch\.version\.hip", re.IGNORECASE)
_PLATFORM_TEST = re.compile(r"DEVICE_TYPE|device_type|\bxpu\b|\bhip\b|is_hip|is_rocm|torch\.version\.|is_xpu|is_cpu")


def _platform_exit(ctx: ModuleContext, comparison: cst.Comparison) -> dict[str, Any]:
    """An earlier `if <platform test>: return False` of the same function (a feature probe that already
    turns other devices away): the place a ROCm port adds its case, so the finding names it."""
    function = _enclosing_function(ctx, comparison)
    gate_line = ctx.position(comparison).start.line
    if function is None or not isinstance(function.body, cst.IndentedBlock):
        return {"exit_note": ""}
    for statement in function.body.body:
        if ctx.position(statement).start.line >= gate_line:
            break
        if (
            isinstance(statement, cst.If)
            and _PLATFORM_TEST.search(ctx.code_for(statement.test))
            and _only_refuses(list(statement.body.body) if isinstance(statement.body, cst.IndentedBlock) else [])
        ):
            line = ctx.position(statement).start.line
            if _ROCM_TEST.search(ctx.code_for(statement.test)):
                return {"covers_rocm": True}
            return {
                "platform_exit": {"line": line, "test": ctx.code_for(statement.test).strip()},
                "exit_note": f" (or add ROCm to the early `if {ctx.code_for(statement.test).strip()}:` refusal on line {line})",
            }
    return {"exit_note": ""}


_LOG_CALLS = {"info", "info_once", "warning", "warning_once", "warn", "warn_once", "debug", "print", "log"}


def _harmless_branch(ctx: ModuleContext, comparison: cst.Comparison, outcome: bool) -> bool:
    """The gate picks a log message, the branch the target takes only refuses (`return False`, `raise`,
    `pytest.skip`), the gate sits in a script's `if __name__ == "__main__":` block, or it picks an atomic-add
    reduction."""
    if _only_logs(ctx, comparison) or _in_main_block(ctx, comparison) or _names_nvidia_arch(ctx, comparison):
        return True
    if _picks_atomic_add(ctx, comparison):
        return True
    branch = _taken_branch(ctx, comparison, outcome)
    return branch is not None and _only_refuses(branch)


def _picks_atomic_add(ctx: ModuleContext, comparison: cst.Comparison) -> bool:
    """`use_atomic_add = ... cap >= 9`, or a gate inside `should_use_atomic_add_reduce()` (Marlin's sm8x bf16
    check in vllm, sglang, gptqmodel): the branch meant for sm9x needs fp16/bf16 global atomic adds, which CDNA3/4
    have (global_atomic_pk_add_bf16 from gfx940 on), none of the Hopper features the message names
    (bench/real_code: 4 false of 4)."""
    for ancestor in ctx.ancestors(comparison):
        if isinstance(ancestor, cst.FunctionDef):
            return "atomic_add" in ancestor.name.value
        if isinstance(ancestor, cst.Assign) and any(
            isinstance(t.target, cst.Name) and "atomic_add" in t.target.value for t in ancestor.targets
        ):
            return True
    return False


def _gate_if(ctx: ModuleContext, comparison: cst.Comparison) -> tuple[cst.If | None, bool]:
    """The `if` whose test is this comparison (alone, negated, or and-ed in), and whether it is negated."""
    node: cst.CSTNode = comparison
    parent, negated = ctx.parent(comparison), False
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        if isinstance(parent, cst.UnaryOperation):
            negated = not negated
        elif not isinstance(parent.operator, cst.And) or negated:
            return None, False  # `a or gate`: the branch is taken for other reasons too
        node, parent = parent, ctx.parent(parent)
    if isinstance(parent, cst.If) and parent.test is node:
        return parent, negated
    return None, False


def _taken_branch(ctx: ModuleContext, comparison: cst.Comparison, outcome: bool) -> list | None:
    """The statements of the `if` branch the target enters when the gate alone decides it."""
    gate, negated = _gate_if(ctx, comparison)
    if gate is None:
        return None
    enters = outcome != negated
    if enters:
        return list(gate.body.body) if isinstance(gate.body, cst.IndentedBlock) else [gate.body]
    if isinstance(gate.test, cst.BooleanOperation):
        return None  # a false and-ed gate skips the body, whatever the other conditions say
    orelse = gate.orelse
    if isinstance(orelse, cst.Else):
        return list(orelse.body.body) if isinstance(orelse.body, cst.IndentedBlock) else [orelse.body]
    return None


_REFUSALS = {"skip", "skipTest", "xfail"}


def _only_refuses(statements: list) -> bool:
    """`return False` / `return None` / `return` / `raise ...` / `pytest.skip(...)`, after optional logging."""
    if not statements:
        return False
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Raise):
                continue
            if isinstance(small, cst.Return) and (
                small.value is None or literal_value(small.value, default="?") in (False, None, 0, ())
            ):
                continue
            if (
                isinstance(small, cst.Expr)
                and isinstance(small.value, cst.Call)
                and (_tail(small.value.func) in _LOG_CALLS | _REFUSALS)
            ):
                continue
            return False
    return True


_NVIDIA_ARCH_NAME = re.compile(r"""["'](?:sm|compute)_?\{""")


def _names_nvidia_arch(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The gate sits in a function that spells the capability as an NVIDIA compile target (f"sm_{major}{minor}a",
    flashinfer's CuTe DSL arch): it picks a name for NVIDIA's toolchain, not a code path run on the target."""
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, cst.FunctionDef):
        parent = ctx.parent(parent)
    return parent is not None and _NVIDIA_ARCH_NAME.search(ctx.code_for(parent)) is not None


def _in_main_block(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """Inside `if __name__ == "__main__":` (a script or benchmark entry, not library code)."""
    parent = ctx.parent(node)
    while parent is not None:
        if (
            isinstance(parent, cst.If)
            and "__main__" in ctx.code_for(parent.test)
            and "__name__" in ctx.code_for(parent.test)
        ):
            return True
        parent = ctx.parent(parent)
    return False


def _only_logs(ctx: ModuleContext, comparison: cst.Comparison) -> bool:
    """`if cap[0] < 9 and dtype == bf16: logger.info_once(...)`: the gate picks a message, not a code path."""
    node: cst.CSTNode = comparison
    parent = ctx.parent(comparison)
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        node, parent = parent, ctx.parent(parent)
    if not isinstance(parent, cst.If) or parent.test is not node or parent.orelse is not None:
        return False
    return _body_only_logs(parent)


def _flip(op):
    flips = {operator.gt: operator.lt, operator.lt: operator.gt, operator.ge: operator.le, operator.le: operator.ge}
    return flips.get(op, op)


def _feature_floor(target: Any) -> tuple[tuple | None, list[str], list[Any]]:
    """Lowest NVIDIA capability with a feature `target` lacks, those features, and the NVIDIA targets."""
    from porter.targets import all_targets, get_target

    nvidia = [t for t in map(get_target, all_targets()) if t.vendor == "nvidia" and t.capability]
    lacking = [
        (tuple(t.capability), t)
        for t in nvidia
        if any(on and not target.features.get(name) for name, on in t.features.items())
    ]
    if not lacking:
        return None, [], nvidia
    floor, first = min(lacking, key=lambda pair: pair[0])
    missing = sorted(name for name, on in first.features.items() if on and not target.features.get(name))
    return floor, missing, nvidia


def _amd_capability(value: Any) -> bool:
    """The literal is the capability tuple ROCm reports for an AMD target (gfx942's (9, 4), gfx950's (9, 5)), a
    value no NVIDIA part reports: the gate tells AMD parts apart on purpose (fbgemm's fp8 dtype choice picks FNUZ
    below (9, 5) under `if torch.version.hip:`, bench/real_code)."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return False
    return tuple(value) in _amd_only_capabilities()


@lru_cache(maxsize=1)
def _amd_only_capabilities() -> frozenset[tuple[int, ...]]:
    """The capabilities of the AMD targets that no NVIDIA target shares (read once from the target specs)."""
    from porter.targets import all_targets, get_target

    targets = [get_target(name) for name in all_targets()]
    amd = {tuple(t.capability) for t in targets if t.vendor == "amd" and t.capability}
    nvidia = {tuple(t.capability) for t in targets if t.vendor == "nvidia" and t.capability}
    return frozenset(amd - nvidia)


def _part_of(capability: tuple, part: str) -> Any:
    if part == "capability":
        return capability
    if part == "sm":
        return capability[0] * 10 + capability[1]
    return capability[0 if part == "major" else 1]


def _outcome(op, actual: Any, value: Any) -> bool | None:
    try:
        return bool(op(actual, tuple(value) if isinstance(value, list) else value))
    except TypeError:
        return None


def _probe_capabilities(floor: tuple) -> list[tuple[int, int]]:
    """Every (major, minor) an NVIDIA part below `floor` could report, and a few above."""
    return [(major, minor) for major in range(floor[0] + 4) for minor in range(10)]


def _capability_hit(node, part, op, value, target, floor, missing, nvidia, admits=None) -> Hit | None:
    outcome = _outcome(op, _part_of(tuple(target.capability), part), value)
    if outcome is None:
        return None
    probes = [c for c in _probe_capabilities(floor) if admits is None or admits(c)]
    same_branch = [c for c in probes if _outcome(op, _part_of(c, part), value) == outcome]
    if not same_branch or min(same_branch) < floor:
        return None  # pre-Hopper NVIDIA parts take this branch too: it needs nothing the target lacks
    meant_for = [t.name for t in nvidia if _outcome(op, _part_of(tuple(t.capability), part), value) == outcome]
    symbol = {
        operator.gt: ">",
        operator.ge: ">=",
        operator.lt: "<",
        operator.le: "<=",
        operator.eq: "==",
        operator.ne: "!=",
    }[op]
    data = {
        "part": part,
        "compared_to": value,
        "op": symbol,
        "actual": _part_of(tuple(target.capability), part),
        "outcome": "true" if outcome else "false",
        "meant_for": ", ".join(meant_for) or "newer NVIDIA parts",
        "missing": ", ".join(missing),
    }
    return Hit(node, data)


class _ScopedNames(dict):
    """Capability names per function: `major` bound from get_device_capability() in one function is not
    the `major` another function parses from a gfx string. Keys are (scope, name); a module-level
    binding is visible everywhere."""

    def __init__(self, ctx: ModuleContext):
        super().__init__()
        self.ctx = ctx

    def bind(self, node: cst.CSTNode, name: str, part: str) -> None:
        self[(self.ctx.scope_names(node), name)] = part

    def part(self, node: cst.Name) -> str | None:
        return self.get((self.ctx.scope_names(node), node.value)) or self.get(((), node.value))


def _capability_names(ctx: ModuleContext) -> _ScopedNames:
    """Names assigned from get_device_capability(): `cap = ...` -> capability, `major, minor = ...`."""
    names = _ScopedNames(ctx)
    for assign in ctx.nodes(cst.Assign):
        if isinstance(assign.value, cst.BinaryOperation) and _sm_number(ctx, assign.value, names):
            for t in assign.targets:
                if isinstance(t.target, cst.Name):
                    names.bind(t.target, t.target.value, "sm")
            continue
        if _CAPABILITY not in ctx.qualified_names(assign.value) or not isinstance(assign.value, cst.Call):
            continue
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                names.bind(target.target, target.target.value, "capability")
            elif isinstance(target.target, cst.Tuple):
                for part, element in zip(("major", "minor"), target.target.elements):
                    if isinstance(element.value, cst.Name):
                        names.bind(element.value, element.value.value, part)
    return names


def _sm_number(ctx: ModuleContext, node: cst.BinaryOperation, aliases: _ScopedNames) -> bool:
    """`major * 10 + minor` (also `cap[0] * 10 + cap[1]`): the "sm" number NVIDIA code compares with 90."""
    if not isinstance(node.operator, cst.Add) or not isinstance(node.left, cst.BinaryOperation):
        return False
    scaled = node.left
    return (
        isinstance(scaled.operator, cst.Multiply)
        and literal_value(scaled.right) == 10
        and _capability_part(ctx, scaled.left, aliases) == "major"
        and _capability_part(ctx, node.right, aliases) == "minor"
    )


def _capability_part(ctx: ModuleContext, node: cst.CSTNode, aliases: _ScopedNames) -> str | None:
    if isinstance(node, cst.BinaryOperation):
        return "sm" if _sm_number(ctx, node, aliases) else None
    if isinstance(node, cst.Call) and _CAPABILITY in ctx.qualified_names(node):
        return "capability"
    if isinstance(node, cst.Name):
        return aliases.part(node)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = literal_value(node.slice[0].slice.value)
        if index in (0, 1) and _capability_part(ctx, node.value, aliases) == "capability":
            return "major" if index == 0 else "minor"
    if isinstance(node, cst.Attribute) and node.attr.value in ("major", "minor"):
        base = node.value
        if isinstance(base, cst.Call) and "torch.cuda.get_device_properties" in ctx.qualified_names(base):
            return node.attr.value
    return None


# ---- PT226: a capability floor that admits the target to a CUDA-only kernel family ---------------

# kernel families that ship only as CUDA extensions (no HIP build in the projects that vendor them)
_CUDA_ONLY_KERNELS = re.compile(r"marlin|\bawq|awq_|exllama|machete|cutlass|tinygemm", re.IGNORECASE)
_TRITON_WORD = re.compile(r"triton", re.IGNORECASE)


@register("cuda_kernel_capability_floor")
def cuda_kernel_capability_floor(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """`get_device_capability()[0] >= 8` deciding whether a CUDA-only kernel (Marlin, an AWQ GEMM, ExLlama...)
    runs: the floor holds on the target too, so it is sent to a kernel that has no ROCm build. PT202 leaves
    `>= 8` alone (Ampere's bf16 floor needs nothing Instinct lacks); here the branch names the kernel."""
    aliases = _capability_names(ctx)
    capability = tuple(target.capability)
    for comparison in ctx.nodes(cst.Comparison):
        if len(comparison.comparisons) != 1:
            continue
        op = _COMPARE.get(type(comparison.comparisons[0].operator))
        value = literal_value(comparison.comparisons[0].comparator)
        part = _capability_part(ctx, comparison.left, aliases)
        if op not in (operator.ge, operator.gt) or part is None or value is None:
            continue
        if not _outcome(op, _part_of(capability, part), value):
            continue
        kernel = _cuda_only_kernel_named(ctx, comparison)
        if kernel is not None and not _vendor_tested(ctx, comparison):
            yield Hit(
                comparison,
                {
                    "part": part,
                    "op": ">=" if op is operator.ge else ">",
                    "value": value,
                    "kernel": kernel,
                    "actual": _part_of(capability, part),
                },
            )


def _cuda_only_kernel_named(ctx: ModuleContext, comparison: cst.Comparison) -> str | None:
    """The CUDA-only kernel family the gate decides on: named by the function the gate is returned from (a
    `_validate_marlin_device_support()` probe) or by the branch it opens; None for a Triton port of one."""
    gate, negated = _gate_if(ctx, comparison)
    if gate is not None and not negated:
        text = ctx.code_for(gate.body)
    else:
        function = _enclosing_function(ctx, comparison)
        returned = any(isinstance(a, cst.Return) for a in ctx.ancestors(comparison))
        text = function.name.value if function is not None and returned else ""
    match = _CUDA_ONLY_KERNELS.search(text)
    if match is None or _TRITON_WORD.search(text):
        return None
    return match.group(0).lower().strip("_")


def _vendor_tested(ctx: ModuleContext, comparison: cst.Comparison) -> bool:
    """A vendor test in the function around the gate (`torch.version.hip`, `is_rocm()`...): ROCm is decided apart."""
    function = _enclosing_function(ctx, comparison)
    return bool(_ROCM_TEST.search(ctx.code_for(function) if function is not None else ctx.text))


# ---- PT203: NVIDIA product names compared against the device name -------------------------------

_NVIDIA_MODEL = re.compile(
    r"(?i)^(nvidia\s*)?(tesla\s*)?(geforce\s*)?(g?[hb]\d00|h800|a100|a800|a10g?|a30|a40|v100|"
    r"l40s?|l4|t4|p100|rtx\s*\w+|dgx.*)\b"
)
_TEXT_TESTS = {"startswith", "endswith", "find", "index", "count", "search", "match", "fullmatch"}


@register("nvidia_device_name_check")
def nvidia_device_name_check(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for node in ctx.nodes(cst.SimpleString):
        text = literal_value(node)
        if not isinstance(text, str) or not _NVIDIA_MODEL.match(text.strip()):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.Arg):
            parent = ctx.parent(parent)
        used_as = None
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            used_as = "comparison"
        elif (
            isinstance(parent, cst.Call)
            and isinstance(parent.func, cst.Attribute)
            and parent.func.attr.value in _TEXT_TESTS
        ):
            used_as = "text test"
        elif isinstance(parent, cst.DictElement) and parent.key is node:
            used_as = "table key"
        if used_as and not _only_logs_near(ctx, node):
            yield Hit(node, {"model": text, "used_as": used_as})


def _only_logs_near(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """The name test is the condition of an `if` whose body only logs: it picks a message, not a path."""
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.If, cst.SimpleStatementLine, cst.FunctionDef)):
        if isinstance(parent, (cst.Comparison, cst.Call)) and isinstance(
            ctx.parent(parent), (cst.If, cst.UnaryOperation, cst.BooleanOperation)
        ):
            test: cst.CSTNode = parent
            while isinstance(up := ctx.parent(test), (cst.UnaryOperation, cst.BooleanOperation)):
                test = up
            gate = ctx.parent(test)
            if isinstance(gate, cst.If) and gate.test is test and gate.orelse is None:
                return _body_only_logs(gate)
        parent = ctx.parent(parent)
    return False


def _body_only_logs(gate: cst.If) -> bool:
    for line in gate.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        for small in line.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if not isinstance(call, cst.Call) or _tail(call.func) not in _LOG_CALLS:
                return False
    return True


# ---- PT210: SDPA forced onto one backend -----------------------------------------------------------


@register("sdpa_single_backend")
def sdpa_single_backend(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for call in ctx.nodes(cst.Call):
        names = ctx.qualified_names(call)
        if "torch.backends.cuda.sdp_kernel" in names:
            if _math_left_on(call):
                continue  # the math backend exists on every platform, and SDPA falls through to it
            spread = _spread_flag_origins(ctx, call)
            if spread is None:
                yield Hit(call, {"api": "torch.backends.cuda.sdp_kernel", "backend": "the enable_* flags"})
                continue
            origins, position = spread
            for origin in origins:
                backend = f"the enable_* flags built by `{ctx.code_for(origin)}`"
                # math_position: where the construction takes enable_math, for the codemod
                yield Hit(
                    origin, {"api": "torch.backends.cuda.sdp_kernel", "backend": backend, "math_position": position}
                )
        elif "torch.nn.attention.sdpa_kernel" in names and call.args:
            first = call.args[0].value
            if _falls_through(first) or _names_priority_list(ctx, first) or _is_parameter(ctx, call, first):
                continue  # a priority list (or MATH) lets ROCm fall through; a parameter is the caller's choice
            if _registered_backend(ctx, call) or _picked_by_backend_name(ctx, call, _forced_backend(ctx, first)):
                continue
            yield Hit(call, {"api": "torch.nn.attention.sdpa_kernel", "backend": ctx.code_for(first)})


def _tail(node: cst.CSTNode) -> str | None:
    return node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", None)


def _falls_through(node: cst.CSTNode) -> bool:
    """A priority list, or a choice that includes MATH (which every platform has): never 'No available kernel'.
    `sdpa_kernel([SDPBackend.MATH])` (hqq's generation helpers) forces only the math backend."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return len(node.elements) > 1 or any(_falls_through(e.value) for e in node.elements)
    return isinstance(node, (cst.Attribute, cst.Name)) and _tail(node) == "MATH"


def _names_priority_list(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """`BACKENDS = [FLASH, EFFICIENT, MATH]` somewhere in the module, or `self.backends = [CUDNN, FLASH, MATH]`
    (torchtitan's attention module): every binding of the name or attribute falls through. An empty list is a
    class-level default the code fills before use (`if not self.backends: self.backends = [...]`)."""
    if isinstance(node, cst.Name):
        name, is_attribute = node.value, False
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        name, is_attribute = node.attr.value, True
    else:
        return False
    values = [
        a.value
        for a in (*ctx.nodes(cst.Assign), *ctx.nodes(cst.AnnAssign))
        if a.value is not None and any(_binds(t, name, is_attribute) for t in _targets(a))
    ]
    filled = [v for v in values if not (isinstance(v, (cst.List, cst.Tuple)) and not v.elements)]
    return bool(filled) and all(_falls_through(v) for v in filled)


def _targets(assign: cst.Assign | cst.AnnAssign) -> list[cst.BaseExpression]:
    return [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]


def _binds(target: cst.BaseExpression, name: str, is_attribute: bool) -> bool:
    """`name = ...`, or for `self.name`: `self.name = ...` and the class-level `name: T = ...`."""
    if isinstance(target, cst.Name):
        return target.value == name
    return (
        is_attribute
        and isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
        and target.attr.value == name
    )


def _registered_backend(ctx: ModuleContext, call: cst.Call) -> bool:
    """The call sits in a function registered by name as one attention backend (`@Registry.register(NAME, ...)`,
    diffusers' _native_cudnn / _native_flash): the user picks that backend by name, so forcing it is the
    function's contract; on ROCm the user picks another one (bench/real_code: 1 false, 2 debatable)."""
    function = _enclosing_function(ctx, call)
    return function is not None and any(
        isinstance(d.decorator, cst.Call) and _tail(d.decorator.func) == "register" for d in function.decorators
    )


_BACKEND_WORDS = {
    "CUDNN_ATTENTION": ("cudnn",),
    "FLASH_ATTENTION": ("flash",),
    "EFFICIENT_ATTENTION": ("efficient", "mem_eff"),
}


def _picked_by_backend_name(ctx: ModuleContext, call: cst.Call, backend: cst.CSTNode) -> bool:
    """The forcing sits in the body of an `if` whose test names that same backend (`elif op_type == "cudnn":`,
    yunchang's attention dispatch), or in a function or class whose own name names it (`def attention_pt_cudnn(...)`,
    one entry of flashrnn's benchmark registry keyed "cudnn"), or in a back-end class named for it (vllm-omni's
    `class CuDNNAttentionImpl`, which its CUDA platform or the user picks by name): the caller picked the backend by
    name, as with a
    registered backend; on ROCm the caller picks another (bench/real_code: held_out4, held_out5)."""
    words = _BACKEND_WORDS.get(_tail(_single(backend)) or "")
    if words is None:
        return False
    child: cst.CSTNode = call
    parent = ctx.parent(call)
    while parent is not None and not isinstance(parent, cst.FunctionDef):
        if isinstance(parent, cst.If) and child is parent.body and _names_any(ctx.code_for(parent.test), words):
            return True
        child, parent = parent, ctx.parent(parent)
    while parent is not None:
        if isinstance(parent, cst.FunctionDef) and _names_any(parent.name.value, words):
            return True  # `def attention_pt_cudnn`: one entry of a name-keyed table
        if isinstance(parent, cst.ClassDef) and _names_any(parent.name.value, words) and _is_backend_class(parent):
            return True  # `class CuDNNAttentionImpl`: one back end of a registry
        parent = ctx.parent(parent)
    return False


def _is_backend_class(node: cst.ClassDef) -> bool:
    """`...Impl` / `...Backend...`: an implementation class of an attention registry (vLLM's AttentionImpl and
    AttentionBackend), not a model layer that happens to be called FlashAttention."""
    name = node.name.value.lower()
    return name.endswith("impl") or "backend" in name


def _names_any(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in words)


def _math_left_on(call: cst.Call) -> bool:
    """sdp_kernel(...) whose enable_math (second positional, default True) is not turned off: SDPA tries the
    enabled backends in priority order and math, present on every platform, takes any shape the others refuse
    (protenix's triangle attention enables flash, math and mem-efficient: never 'No available kernel').
    A flag porter cannot read counts as off."""
    for index, arg in enumerate(call.args):
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "enable_math" or (keyword is None and index == 1 and arg.star == ""):
            return literal_value(arg.value, default="?") is True
        if arg.star:
            return False  # **flags: the math flag is not visible
    return True


def _spread_flag_origins(ctx: ModuleContext, call: cst.Call) -> tuple[list[cst.Call], int] | None:
    """`sdp_kernel(**config._asdict())` where this module defines the flags' namedtuple: the constructions of it that
    turn enable_math off, where a port changes the flags (colt5-attention's `Config(True, False, False)`, built only
    for an A100, so the finding takes that branch's reach), and enable_math's position among the fields. None where
    the record is not one this module builds."""
    spread = [a for a in call.args if a.star == "**"]
    if len(spread) != 1 or len(call.args) != 1:
        return None
    value = spread[0].value
    if not (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "_asdict"
    ):
        return None
    records = _flag_records(ctx)
    if len(records) != 1:
        return None
    ((name, fields),) = records.items()
    built = [c for c in ctx.nodes(cst.Call) if isinstance(c.func, cst.Name) and c.func.value == name]
    if not built:
        return None
    position = fields.index("enable_math")
    return [
        c for c in built if literal_value(_field_arg(c, "enable_math", position), default="?") is not True
    ], position


def _flag_records(ctx: ModuleContext) -> dict[str, list[str]]:
    """`Config = namedtuple("Config", ["enable_flash", "enable_math", ...])` in the module: name -> fields."""
    records = {}
    for assign in ctx.nodes(cst.Assign):
        value = assign.value
        if not (isinstance(value, cst.Call) and "collections.namedtuple" in ctx.qualified_names(value)):
            continue
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) or len(value.args) < 2:
            continue
        fields = literal_value(value.args[1].value, default=None)
        if isinstance(fields, str):
            fields = fields.replace(",", " ").split()
        if isinstance(fields, (list, tuple)) and "enable_math" in fields:
            records[assign.targets[0].target.value] = [str(f) for f in fields]
    return records


def _field_arg(call: cst.Call, field: str, position: int) -> cst.BaseExpression | None:
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is not None and arg.keyword.value == field) or (arg.keyword is None and index == position):
            return arg.value
    return None


def _is_parameter(ctx: ModuleContext, call: cst.Call, node: cst.CSTNode) -> bool:
    """`sdpa_kernel(backends)` where `backends` is a parameter of the enclosing function, never rebound in it
    (nemo's recompute helper restores the set the forward ran with): what it forces is the caller's choice, not
    visible here; a caller that writes one backend out is where it shows."""
    if not isinstance(node, cst.Name):
        return False
    function = _enclosing_function(ctx, call)
    if function is None or node.value not in {p.name.value for p in _all_params(function.params)}:
        return False
    return not any(
        _binds(t, node.value, False)
        for a in (*ctx.nodes(cst.Assign), *ctx.nodes(cst.AnnAssign))
        for t in _targets(a)
        if _enclosing_function(ctx, a) is function
    )


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    return [*params.posonly_params, *params.params, *star, *params.kwonly_params]


def _enclosing_function(ctx: ModuleContext, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The innermost function holding `node`, None at module level."""
    return next((a for a in ctx.ancestors(node) if isinstance(a, cst.FunctionDef)), None)


def _forced_backend(ctx: ModuleContext, node: cst.CSTNode) -> cst.CSTNode:
    """The one backend a local name forces: `backends = [SDPBackend.MATH]` on one path and
    `backends = [SDPBackend.CUDNN_ATTENTION]` on the other (vllm-omni's cuDNN back end) force cuDNN, the
    math binding falling through. The node itself when the name has no such single answer."""
    if not isinstance(node, cst.Name):
        return node
    values = [
        a.value
        for a in (*ctx.nodes(cst.Assign), *ctx.nodes(cst.AnnAssign))
        if a.value is not None and any(_binds(t, node.value, False) for t in _targets(a))
    ]
    forcing = [v for v in values if not _falls_through(v)]
    backends = {ctx.code_for(_single(v)) for v in forcing}
    return _single(forcing[0]) if len(backends) == 1 else node


def _single(node: cst.CSTNode) -> cst.CSTNode:
    """`[X]` or `(X,)` -> X; anything else as it is."""
    if isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == 1:
        return node.elements[0].value
    return node


# ---- PT212: host syncs and collectives inside CUDA-graph capture -----------------------------------

_SYNC_METHODS = {"item", "cpu", "tolist", "numpy", "nonzero", "synchronize"}
_SYNC_CALLS = ("torch.cuda.synchronize", "torch.distributed.", "torch.nonzero")


@register("graph_capture_hazards")
def graph_capture_hazards(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    for with_node in ctx.nodes(cst.With):
        if not any(_is_capture(ctx, item.item) for item in with_node.items):
            continue
        for node in descendants(with_node.body):
            if not isinstance(node, cst.Call):
                continue
            what = None
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _SYNC_METHODS:
                what = f".{node.func.attr.value}()"
            else:
                for name in ctx.qualified_names(node):
                    if name.startswith(_SYNC_CALLS):
                        what = name
            if what:
                yield Hit(node, {"call": what})


def _is_capture(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    names = ctx.qualified_names(node) if isinstance(node, cst.Call) else set()
    return bool(names & {"torch.cuda.graph", "torch.cuda.graphs.graph"})


# ---- PT214: L2_cache_size used as "the" last-level cache -------------------------------------------


_ALLOCATORS = {f"torch.{name}" for name in ("empty", "zeros", "ones", "full", "rand", "randn", "randint")}


@register("l2_cache_size_use")
def l2_cache_size_use(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """PT214: L2_cache_size that sizes a tensor (a cache-flush buffer), directly or through a local name, or
    that a sizing helper returns (`return props.L2_cache_size * 2`). A read kept in a device-info record or
    printed sizes nothing here (bench/real_code: debatable)."""
    for node in ctx.nodes(cst.Attribute):
        if node.attr.value == "L2_cache_size" and _sizes_allocation(ctx, node):
            yield Hit(node, {"property": "L2_cache_size"})


def _sizes_allocation(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    bound: str | None = None
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
        if isinstance(parent, cst.Return) or (
            isinstance(parent, cst.Call) and ctx.qualified_names(parent) & _ALLOCATORS
        ):
            return True
        if isinstance(parent, cst.Assign) and bound is None:
            names = [t.target.value for t in parent.targets if isinstance(t.target, cst.Name)]
            bound = names[0] if len(names) == 1 else None
        parent = ctx.parent(parent)
    if bound is None or parent is None:
        return False
    return any(
        isinstance(call, cst.Call)
        and ctx.qualified_names(call) & _ALLOCATORS
        and any(isinstance(n, cst.Name) and n.value == bound for a in call.args for n in descendants(a))
        for call in descendants(parent)
    )


# ---- PT213: allocator settings that turn expandable_segments on ----------------------------------

_EXPANDABLE = re.compile(r"expandable_segments\s*:\s*True")


@register("expandable_segments_setting")
def expandable_segments_setting(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """Strings that turn expandable_segments on, not ones the code only reads, compares or prints.

    `"expandable_segments:True" not in os.getenv(...)` guards against a known bug, and an assert or log
    message that names the setting relies on nothing: neither is a finding.
    """
    docstrings = ctx.index.docstrings if ctx.index is not None else set()
    for node in [*ctx.nodes(cst.SimpleString), *ctx.nodes(cst.FormattedString)]:
        text = literal_value(node) if isinstance(node, cst.SimpleString) else ctx.code_for(node)
        if id(node) in docstrings or not isinstance(text, str) or not _EXPANDABLE.search(text):
            continue
        if not _only_read(ctx, node):
            yield Hit(node, {"value": text})


def _only_read(ctx: ModuleContext, node: cst.CSTNode) -> bool:
    """Compared with, part of an assert/raise message, or an argument of a logging call."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            return True
        if isinstance(parent, cst.Assert) and parent.msg is child or isinstance(parent, cst.Raise):
            return True
        if isinstance(parent, cst.Call) and _tail(parent.func) in _LOG_CALLS | {"RuntimeError", "ValueError"}:
            return True
        if isinstance(parent, cst.Assert):
            return True  # the assert's test reads the setting
        child, parent = parent, ctx.parent(parent)
    return False


# ---- PT221: assert / raise guards that admit only OCP fp8 dtypes --------------------------------------

_OCP_FP8 = {"torch.float8_e4m3fn", "torch.float8_e5m2"}


def _dtype_names(ctx: ModuleContext, node: cst.BaseExpression) -> list[set[str]] | None:
    """Qualified names of a dtype or of each element of a literal list/tuple/set of dtypes, else None."""
    items = [e.value for e in node.elements] if isinstance(node, (cst.List, cst.Tuple, cst.Set)) else [node]
    names = [ctx.qualified_names(item) for item in items if isinstance(item, (cst.Name, cst.Attribute))]
    return names if names and len(names) == len(items) else None


def _admits_only_ocp(ctx: ModuleContext, test: cst.BaseExpression, admitting: tuple[type, ...]) -> bool:
    """`x in [e4m3fn]` / `x == e4m3fn` (admitting: In, Equal) or their negation (NotIn, NotEqual); the list
    may be a local the function binds once (`supported = [e4m3fn, e5m2]; assert dtype in supported`)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, admitting) or not _is_dtype_parameter(ctx, test.left):
        return False
    admitted = _admitted_list(ctx, target.comparator)
    names = _dtype_names(ctx, admitted.value if admitted is not None else target.comparator)
    if not names:
        return False
    return all(n & _OCP_FP8 for n in names) and any("torch.float8_e4m3fn" in n for n in names)


def _admitted_list(ctx: ModuleContext, node: cst.BaseExpression) -> cst.Assign | None:
    """The assignment of a local allow-list the check reads: the function's only binding of the name, to a
    literal list, tuple or set. That binding is what a port widens (with the fnuz dtypes)."""
    if not isinstance(node, cst.Name):
        return None
    function = _enclosing_function(ctx, node)
    if function is None:
        return None
    bindings = [
        n
        for n in descendants(function.body)
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign))
        and any(isinstance(t, cst.Name) and t.value == node.value for t in _bound_names(n))
    ]
    if len(bindings) != 1:
        return None
    (assign,) = bindings
    return (
        assign if isinstance(assign, cst.Assign) and isinstance(assign.value, (cst.List, cst.Tuple, cst.Set)) else None
    )


def _bound_names(statement: cst.Assign | cst.AugAssign | cst.AnnAssign) -> list[cst.BaseExpression]:
    if isinstance(statement, cst.Assign):
        return [t.target for t in statement.targets]
    return [statement.target]


def _admitted_where(ctx: ModuleContext, test: cst.BaseExpression) -> dict:
    """The lines of the local allow-list a guard reads (the port edits them), for the finding's data."""
    if not isinstance(test, cst.Comparison):
        return {}
    admitted = _admitted_list(ctx, test.comparisons[0].comparator)
    if admitted is None:
        return {}
    where = ctx.position(admitted)
    return {"admitted": {"line": where.start.line, "end_line": where.end.line}}


def _is_dtype_parameter(ctx: ModuleContext, node: cst.BaseExpression) -> bool:
    """The checked value is a parameter of the enclosing function: the caller picks the fp8 dtype and the
    guard refuses fnuz. A tensor's `.dtype` checked against what the same code produced is consistency."""
    if not isinstance(node, cst.Name):
        return False
    function = _enclosing_function(ctx, node)
    params = function.params if function is not None else None
    return params is not None and any(
        p.name.value == node.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)
    )


def _raises_only(body: cst.BaseSuite) -> bool:
    statements = body.body if isinstance(body, cst.IndentedBlock) else []
    return (
        len(statements) == 1
        and isinstance(statements[0], cst.SimpleStatementLine)
        and isinstance(statements[0].body[0], cst.Raise)
    )


@register("fp8_guard_excludes_fnuz")
def fp8_guard_excludes_fnuz(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    """PT221: `assert dtype in [torch.float8_e4m3fn]`, `if dtype != torch.float8_e4m3fn: raise`: the
    check turns away float8_e4m3fnuz, the e4m3 dtype gfx942 computes in."""
    for node in ctx.nodes(cst.Assert):
        if _admits_only_ocp(ctx, node.test, (cst.In, cst.Equal)) and _guards_own_fp8(ctx, node, node.test):
            yield Hit(node, {"guard": "assert", "remedy": _GUARD_REMEDY, **_admitted_where(ctx, node.test)})
    for node in ctx.nodes(cst.If):
        if (
            _raises_only(node.body)
            and _admits_only_ocp(ctx, node.test, (cst.NotIn, cst.NotEqual))
            and _guards_own_fp8(ctx, node, node.test)
        ):
            yield Hit(node.test, {"guard": "raise", "remedy": _GUARD_REMEDY, **_admitted_where(ctx, node.test)})
    for table in ctx.nodes(cst.Dict):
        if only_on_cuda(ctx, table):
            continue
        for entry in _ocp_entries_of_triton_table_without_fnuz(ctx, table):
            yield Hit(entry, {"guard": "torch-to-Triton dtype table", "remedy": _TABLE_REMEDY})


_GUARD_REMEDY = "admit torch.float8_e4m3fnuz too and take the range from torch.finfo(dtype)"
_TABLE_REMEDY = "add the FNUZ entries (torch.float8_e4m3fnuz: tl.float8e4b8, torch.float8_e5m2fnuz: tl.float8e5b16)"
_FNUZ_FP8 = {"torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz"}
_OCP_TRITON_FP8 = {"triton.language.float8e4nv", "triton.language.float8e5"}


def _ocp_entries_of_triton_table_without_fnuz(ctx: ModuleContext, table: cst.Dict) -> list[cst.DictElement]:
    """The OCP fp8 entries of a table from torch dtypes to Triton dtypes (`{torch.float8_e4m3fn: tl.float8e4nv}`)
    that has an e4m3fn key and no FNUZ key at all: a float8_e4m3fnuz tensor, the fp8 gfx942 computes in, is a
    KeyError where the kernel's launcher looks its Triton type up (torchao's FP8_DTYPE_MAP, gemlite's
    TORCH_DTYPE_TO_TRITON: both ports add the fnuz entries). A table with one FNUZ key was ported."""
    entries = [e for e in table.elements if isinstance(e, cst.DictElement)]
    keys = [ctx.qualified_names(e.key) if isinstance(e.key, (cst.Name, cst.Attribute)) else set() for e in entries]
    if any(names & _FNUZ_FP8 for names in keys) or not any("torch.float8_e4m3fn" in names for names in keys):
        return []
    feeds_triton = any(
        isinstance(e.value, (cst.Name, cst.Attribute)) and ctx.qualified_names(e.value) & _OCP_TRITON_FP8
        for e in entries
    )
    return [e for e, names in zip(entries, keys) if feeds_triton and names & _OCP_FP8]


def _guards_own_fp8(ctx: ModuleContext, node: cst.CSTNode, test: cst.BaseExpression) -> bool:
    """The guarding function makes the fp8 data itself: it launches a Triton kernel (`kernel[grid](...)`),
    whose fp8 dtype is compiled for the target, or allocates / casts with the checked dtype (a torch
    quantizer, in a module with Triton kernels or calling a project function in another module that launches
    one). A guard before a vendor library call (Marlin, cuTile) is that library's contract."""
    function = _enclosing_function(ctx, node)
    if function is None:
        return False
    if "triton" in ctx.text and any(
        isinstance(n, cst.Call) and isinstance(n.func, cst.Subscript) for n in descendants(function)
    ):
        return True
    checked = test.left if isinstance(test, cst.Comparison) else None
    if not (isinstance(checked, cst.Name) and dtype_parameter_makes_data(function, checked.value)):
        return False
    if defines_triton_kernels(ctx):
        return True
    from porter.analyze.visitors.fp8_formats import dtype_parameter_reaches_project_kernels  # imports this module

    return dtype_parameter_reaches_project_kernels(ctx, function, checked)


ALLOCATORS = {"empty", "empty_like", "new_empty", "zeros", "zeros_like", "new_zeros", "empty_strided"}


def dtype_parameter_makes_data(function: cst.FunctionDef, name: str) -> bool:
    """The parameter is the dtype of an allocation or the target of a cast in the function body."""
    for node in descendants(function.body):
        if not isinstance(node, cst.Call):
            continue
        tail = _tail(node.func)
        for arg in node.args:
            if not (isinstance(arg.value, cst.Name) and arg.value.value == name):
                continue
            if arg.keyword is not None and arg.keyword.value == "dtype" and tail in ALLOCATORS | {"to"}:
                return True
            if arg.keyword is None and tail == "to":
                return True
    return False


# ---- PT315: torch.cuda.nccl.version() gates -------------------------------------------------------

# RCCL reports NCCL's numbering and carries what NCCL added before 2.17 (bf16 reductions since 2.10, ...); 2.17
# brought NVLink SHARP (NVLS), the first NCCL feature with no AMD hardware behind it. A gate below that answers
# right on ROCm (torchtune's bf16 check passes on RCCL); one at or above it may switch on NVLink-only paths.
_FIRST_NVLINK_ONLY_NCCL = (2, 17)
_ORDERING = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


@register("nccl_version_gate")
def nccl_version_gate(ctx: ModuleContext, rule: Any, target: Any) -> Iterable[Hit]:
    """torch.cuda.nccl.version() compared with NCCL 2.17 or later, or used in a way whose threshold is not a
    literal (fail closed); not a getter that returns it as is (DeepSpeed's accelerator: RCCL's version on ROCm)."""
    for call in ctx.nodes(cst.Call):
        if "torch.cuda.nccl.version" not in ctx.qualified_names(call):
            continue
        if isinstance(ctx.parent(call), cst.Return):
            continue
        threshold = _compared_version(ctx, call)
        if threshold is not None and threshold < _FIRST_NVLINK_ONLY_NCCL:
            continue
        yield Hit(call, {"what": "NCCL version gate"})


def _compared_version(ctx: ModuleContext, call: cst.Call) -> tuple[int, ...] | None:
    """The literal version tuple the call is ordered against (`version() >= (2, 10)`, `(2, 10) <= version()`)."""
    parent = ctx.parent(call)
    comparison = ctx.parent(parent) if isinstance(parent, cst.ComparisonTarget) else parent
    if not isinstance(comparison, cst.Comparison) or len(comparison.comparisons) != 1:
        return None
    (ordering,) = comparison.comparisons
    if not isinstance(ordering.operator, _ORDERING):
        return None
    other = ordering.comparator if comparison.left is call else comparison.left
    value = literal_value(other)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, int) for v in value):
        return tuple(value)
    return None
