"""Device-query codemods: hard-coded SM counts (PT116), torch.version.cuda checks (PT201), capability
gates (PT202), shared_memory_per_block_optin (PT108), "hip"/"rocm" device strings (PT220)."""

from __future__ import annotations

import re

import libcst as cst

from porter.remedy.codemods import codemod
from porter.remedy.codemods._cst import LineScoped, code, expr, finish, int_value, transform
from porter.targets import all_targets

# ---- PT116 hard-coded SM counts -------------------------------------------------------------------


def _known_unit_counts() -> set[int]:
    return {t.units for t in all_targets().values()}


class _SmCount(LineScoped):
    def __init__(self, findings, ctx, target):
        super().__init__(findings, ctx, target)
        self.counts = _known_unit_counts() | {
            int(f.data["value"]) for f in findings if isinstance(f.data.get("value"), int)
        }

    def leave_Integer(self, original, updated):
        if int_value(updated) not in self.counts or not self.in_scope(original):
            return updated
        new = expr(f"{self.ctx.shim_alias}.multiprocessor_count()")
        self.uses_shim = True
        self.changes.append(f"line {self.line_of(original)}: {updated.value} -> {code(new)}")
        return new


@codemod("PT116")
def sm_count(source, findings, target, ctx):
    transformer = _SmCount(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"{target.name} has {target.units} compute units (other parts of the same arch differ), so the count is read "
        "from the device at run time (torch multi_processor_count through porter_shim), on NVIDIA too."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("units"))


# ---- PT201 torch.version.cuda checks that reject ROCm ------------------------------------------


def _hip_twin(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`torch.version.cuda` -> `torch.version.hip` (same prefix as written), else None."""
    if isinstance(node, cst.Attribute) and node.attr.value == "cuda" and code(node.value).endswith("version"):
        return node.with_changes(attr=cst.Name("hip"))
    return None


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _accept_hip(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """Rewrite a test that is true when torch has no CUDA (or false when it has) to accept HIP too."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        twin = _hip_twin(test.expression)
        if twin is not None:  # not cuda  -> not (cuda or hip)
            return expr(f"not ({code(test.expression)} or {code(twin)})")
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        twin = _hip_twin(test.left)
        target = test.comparisons[0]
        if twin is not None and _is_none(target.comparator):
            if isinstance(target.operator, (cst.Is, cst.Equal)):  # cuda is None -> ... and hip is None
                return expr(f"{code(test)} and {code(twin)} is None")
            if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):  # cuda is not None -> ... or hip is not None
                return expr(f"{code(test)} or {code(twin)} is not None")
    twin = _hip_twin(test)
    if twin is not None:  # bare `torch.version.cuda` (truthy) -> cuda or hip
        return expr(f"{code(test)} or {code(twin)}")
    return None


def _raises(body: cst.BaseSuite) -> bool:
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for stmt in statements:
        smalls = stmt.body if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
        if any(isinstance(s, cst.Raise) for s in smalls):
            return True
        if any(isinstance(s, cst.Expr) and "exit" in code(s) for s in smalls):
            return True
    return False


def _reject_test(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """In the test of an `if ...: raise`, make each "no CUDA" clause also require "no HIP"."""
    if isinstance(test, cst.BooleanOperation):
        left, right = _reject_test(test.left), _reject_test(test.right)
        if left is None and right is None:
            return None
        wrap = lambda e: e.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # noqa: E731
        return test.with_changes(
            left=wrap(left) if left is not None else test.left, right=wrap(right) if right is not None else test.right
        )
    rejects_missing = isinstance(test, cst.UnaryOperation) or (
        isinstance(test, cst.Comparison) and any(isinstance(c.operator, (cst.Is, cst.Equal)) for c in test.comparisons)
    )
    return _accept_hip(test) if rejects_missing else None


class _VersionCuda(LineScoped):
    def leave_If(self, original, updated):
        if not self.in_scope(original.test) or not _raises(updated.body) or "version.hip" in code(updated.test):
            return updated
        test = updated.test
        new = _reject_test(test)
        if new is not None:
            self.changes.append(f"line {self.line_of(original)}: `if {code(test)}` -> `if {code(new)}`")
            return updated.with_changes(test=new)
        return updated

    def leave_Assert(self, original, updated):
        if not self.in_scope(original) or "version.hip" in code(updated.test):
            return updated
        new = _accept_hip(updated.test)
        if new is None or isinstance(updated.test, cst.UnaryOperation):
            return updated
        self.changes.append(f"line {self.line_of(original)}: `assert {code(updated.test)}` -> `assert {code(new)}`")
        return updated.with_changes(test=new)


@codemod("PT201")
def version_cuda(source, findings, target, ctx):
    transformer = _VersionCuda(findings, ctx, target)
    new = transform(source, transformer)
    if new == source:
        return None
    rationale = (
        "torch.version.cuda is None on ROCm builds while the GPU works through the same torch.cuda API; checks that "
        "refuse to run without CUDA now also accept torch.version.hip."
    )
    result = finish(source, new, transformer, ctx, rationale, target.facts("vendor"))
    result.notes.append("Version comparisons against torch.version.cuda (parsing its number) are left for review.")
    return result


# ---- PT202 capability gates ------------------------------------------------------------------------

# What a Hopper/Ada capability gate usually protects, recognised by words in the guarded code.
_FEATURE_WORDS = [
    ("fp8", re.compile(r"fp8|float8|e4m3|e5m2", re.IGNORECASE)),
    ("mxfp4", re.compile(r"mxfp4|fp4", re.IGNORECASE)),
    ("tma", re.compile(r"\btma\b|tensor_?descriptor|TensorDescriptor", re.IGNORECASE)),
    ("wgmma", re.compile(r"wgmma", re.IGNORECASE)),
    ("warp_specialization", re.compile(r"warp_speciali[sz]", re.IGNORECASE)),
    ("clusters", re.compile(r"cluster|num_ctas", re.IGNORECASE)),
    ("tf32", re.compile(r"tf32", re.IGNORECASE)),
    ("bf16", re.compile(r"bf16|bfloat16", re.IGNORECASE)),
]


def _capability_comparison(node) -> bool:
    if not isinstance(node, cst.Comparison):
        return False
    text = code(node)
    has_cap = "capability" in text or "major" in text or re.search(r"\bcc\b|\bsm\b|\bcap\b", text)
    rhs = node.comparisons[-1].comparator
    numeric = isinstance(rhs, cst.Tuple) or int_value(rhs) is not None
    return bool(has_cap) and numeric


def _feature_for(text: str) -> str | None:
    found = [name for name, pattern in _FEATURE_WORDS if pattern.search(text)]
    return found[0] if len(found) == 1 or (found and found[0] == "fp8") else None


class _CapabilityGate(LineScoped):
    def __init__(self, findings, ctx, target):
        super().__init__(findings, ctx, target)
        self.guarded: list[str] = []  # text of the if/ifexp whose test is being rewritten (innermost last)
        self.skip: set[int] = set()

    def visit_If(self, node):
        # the guarded code names the feature; rendered only for gates the findings point at
        self.guarded.append(code(node.body) if self.in_scope(node.test) else "")
        return super().visit_If(node)

    def leave_If(self, original, updated):
        self.guarded.pop()
        return updated

    def visit_BooleanOperation(self, node):
        if "IS_HIP" in code(node.left):  # `(not) porter_shim.IS_HIP and/or <gate>`: already rewritten
            self.skip.add(id(node.right))
        return True

    def leave_Comparison(self, original, updated):
        if id(original) in self.skip or self.in_nvidia_branch:
            return updated
        if not self.in_scope(original) or not _capability_comparison(updated) or "IS_HIP" in code(updated):
            return updated
        context_text = (self.guarded[-1] if self.guarded else "") + code(updated)
        feature = _feature_for(context_text)
        # `>= (9, 0)` asks "is this at least Hopper"; `< (9, 0)` / `!= (9, 0)` ask the opposite
        negative = isinstance(updated.comparisons[-1].operator, (cst.LessThan, cst.LessThanEqual, cst.NotEqual))
        self.uses_shim = True
        if feature is not None:
            query = f'{self.ctx.shim_alias}.has_feature("{feature}")'
            query = f"not {query}" if negative else query
            # portable: NVIDIA keeps its own gate (an Ada part stays off a Hopper-only path); AMD asks the feature
            new = expr(
                query if self.ctx.exclusive else f"({query} if {self.ctx.shim_alias}.IS_HIP else {code(updated)})"
            )
            self.changes.append(f"line {self.line_of(original)}: `{code(updated)}` -> `{code(new)}`")
            return new
        if negative:
            new = expr(f"({self.ctx.shim_alias}.IS_HIP or {code(updated)})")
            self.changes.append(f"line {self.line_of(original)}: `{code(updated)}` now true on AMD")
        else:
            new = expr(f"(not {self.ctx.shim_alias}.IS_HIP and {code(updated)})")
            self.changes.append(f"line {self.line_of(original)}: `{code(updated)}` now false on AMD")
        self.notes.append(
            f"line {self.line_of(original)}: the gate's feature could not be told from the code; AMD now takes the "
            "fallback branch. Review whether the target supports the guarded path."
        )
        return new


@codemod("PT202")
def capability_gate(source, findings, target, ctx):
    transformer = _CapabilityGate(findings, ctx, target)
    new = transform(source, transformer)
    features = ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in sorted(target.features.items()))
    rationale = (
        f"ROCm reports a synthetic compute capability ({target.name}: {tuple(target.capability)}) that passes NVIDIA "
        f"architecture gates; on ROCm gates now ask for the feature itself (porter_shim.has_feature; {target.name}: "
        f"{features}), on CUDA the original comparison still decides."
    )
    return finish(
        source,
        new,
        transformer,
        ctx,
        rationale,
        target.facts("capability", "features"),
        safety="unsafe" if transformer.notes else "safe",
    )


# ---- PT108 shared_memory_per_block_optin ------------------------------------------------------------


class _SmemOptin(LineScoped):
    def leave_Attribute(self, original, updated):
        if updated.attr.value != "shared_memory_per_block_optin" or not self.in_scope(original):
            return updated
        owner = code(updated.value)
        new = expr(f'(getattr({owner}, "shared_memory_per_block_optin", None) or {owner}.shared_memory_per_block)')
        self.changes.append(f"line {self.line_of(original)}: falls back to shared_memory_per_block")
        return new


@codemod("PT108")
def smem_optin(source, findings, target, ctx):
    transformer = _SmemOptin(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        f"ROCm device properties have no shared_memory_per_block_optin; shared_memory_per_block is the LDS a block "
        f"may use ({target.name}: {target.lds_bytes} bytes)."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("lds_bytes"))


# ---- PT220 "hip" / "rocm" device strings -------------------------------------------------------------


class _DeviceString(LineScoped):
    def leave_SimpleString(self, original, updated):
        match = re.match(r"^([rRuU]*)(['\"]{1,3})(hip|rocm)(:\d+)?\2$", updated.value)
        if match is None or not self.in_scope(original):
            return updated
        prefix, quote, _, index = match.groups()
        new = updated.with_changes(value=f"{prefix}{quote}cuda{index or ''}{quote}")
        self.changes.append(f"line {self.line_of(original)}: {updated.value} -> {new.value}")
        return new


@codemod("PT220")
def device_string(source, findings, target, ctx):
    transformer = _DeviceString(findings, ctx, target)
    new = transform(source, transformer)
    rationale = 'PyTorch on ROCm keeps the "cuda" device type; "hip" and "rocm" are not valid device strings.'
    return finish(source, new, transformer, ctx, rationale, target.facts("vendor"))
