"""PT225: an NVIDIA-only capability predicate that refuses AMD the fp8 / MX path it has.

`assert has_cuda_capability(8, 9)`, `if not is_sm_at_least_90(): raise`, `if has_cuda_capability(8, 9) or
emulate: ... else: raise` in fp8 / MX code. Whether the predicate is False on the target is a project fact
(the helper returns through `torch.version.hip is None` / `torch.version.cuda`, or compares the capability
with a floor above the target's tuple): this visitor only finds the sites and names the predicate call and
the other alternatives of the test; porter.analyze.scan keeps a site only where the project evaluates the
predicate to False on the target and no alternative is True or platform-dependent there (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from porter.analyze.project import Project
from porter.analyze.project_facts import module_facts
from porter.analyze.triton import flow
from porter.analyze.visitors import Hit, ModuleContext, register

# fp8 / MX code: the module path or the enclosing function names it, or the module imports torchao's float8.
_FP8_NAME = re.compile(r"float8|fp8|scaled_?mm", re.IGNORECASE)
_MX_WORDS = {"mx", "mxfp4", "mxfp6", "mxfp8"}
_FP8_MX_IMPORT = re.compile(r"^\s*(?:from|import)\s+torchao\.float8\b", re.MULTILINE)
# A refusal in front of a CUDA-only kernel is right on AMD: these names in the module mean one may be behind it.
_CUDA_ONLY_KERNELS = re.compile(r"sageattention|cutlass|marlin", re.IGNORECASE)
# NVIDIA's own fp4 format (e4m3 scales per 16 values): no AMD part computes in it, so refusing it is right.
_NVIDIA_ONLY_FORMATS = re.compile(r"nvfp4", re.IGNORECASE)


@register("capability_predicate_refuses_amd")
def capability_predicate_refuses_amd(ctx: ModuleContext, rule, target) -> Iterable[Hit]:
    if _CUDA_ONLY_KERNELS.search(ctx.text):
        return
    module_kind = _format_named(ctx.path) or ("fp8" if _FP8_MX_IMPORT.search(ctx.text) else None)
    for node, guard, test in _refusals(ctx):
        refusal = ctx.module.code_for_node(node)
        if _NVIDIA_ONLY_FORMATS.search(refusal):
            continue
        names = [refusal, *_enclosing_names(ctx, node)]  # the refusal's own text says best what it guards
        kind = next(filter(None, map(_format_named, names)), module_kind)
        if kind is None or not _computes(target, kind):
            continue
        alternatives = _alternatives(test)
        calls = [a for a in alternatives if _is_predicate_call(a)]
        if len(calls) != 1:
            continue
        predicate = calls[0]
        others = [ctx.module.code_for_node(a) for a in alternatives if a is not predicate]
        call = _one_line(ctx.module.code_for_node(predicate))
        if not _refuses_here(ctx, node, call, others, target):
            continue
        yield Hit(
            node,
            {
                "guard": guard,
                "predicate": call,
                "refusal_alternatives": others,
            },
        )


def _one_line(code: str) -> str:
    """`has_cuda_capability(\n    10, 0\n)` as the message names it: `has_cuda_capability(10, 0)`."""
    return " ".join(code.split()).replace("( ", "(").replace(" )", ")")


def _refuses_here(ctx: ModuleContext, node: cst.CSTNode, predicate: str, others: list[str], target) -> bool:
    """The module alone decides that `predicate` refuses the target, or (in a tree scan, where porter.analyze.scan
    re-decides every site over the whole project) the helper is imported and the project may decide it."""
    line = ctx.position(node).start.line
    if _one_module_project(ctx, target).refusing_predicate(ctx.path, line, predicate, others) is not None:
        return True
    imported = ctx.index.aliases.get(predicate.split("(", 1)[0].split(".", 1)[0], set())
    return any(_in_scanned_tree(qualified) for qualified in imported)


def _in_scanned_tree(qualified: str) -> bool:
    """The module a helper is imported from is one of the tree scan's files (no tree scan: False)."""
    tree = flow.project()
    if tree is None or "." not in qualified:
        return False
    module = qualified.rsplit(".", 1)[0].replace(".", "/")
    endings = (f"{module}.py", f"{module}/__init__.py")
    return any(path == e or path.endswith("/" + e) for path in tree.files for e in endings)


def _one_module_project(ctx: ModuleContext, target) -> Project:
    key = "one_module_project"
    if key not in ctx.cache:
        facts = module_facts(ctx.text, ctx.path)
        ctx.cache[key] = Project({ctx.path: facts}, target)
    return ctx.cache[key]


def _format_named(name: str) -> str | None:
    """The format a path or name says: "mx" (`mx.py`, `MXConverter`, `to_mxfp8`) or "fp8" (`float8.py`,
    `Float8Linear`, `fp8_blockwise_mm`), else None. MX first: MXFP8 code is MX code."""
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]*[a-z]*\d*", re.sub(r"[^A-Za-z0-9]", " ", name))
    if any(word.lower() in _MX_WORDS for word in words):
        return "mx"
    return "fp8" if _FP8_NAME.search(name) else None


def _computes(target, kind: str) -> bool:
    """The target has the format the code is about: microscaling hardware for MX, an fp8 format for fp8
    (a refusal of MX on gfx942 is right)."""
    if kind == "mx":
        return bool(target.features.get("mxfp4"))
    return bool(target.fp8_formats)


def _enclosing_names(ctx: ModuleContext, node: cst.CSTNode) -> list[str]:
    """Names of the functions and classes around `node`."""
    return [a.name.value for a in ctx.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.ClassDef))]


def _refusals(ctx: ModuleContext) -> Iterable[tuple[cst.CSTNode, str, cst.BaseExpression]]:
    """(statement, guard kind, the test that must hold to go on) for each assert / if-raise."""
    for statement in ctx.nodes(cst.Assert):
        yield statement, "assert", statement.test
    for branch in ctx.nodes(cst.If):
        test = branch.test
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and _raises(branch.body):
            yield branch, "if not ...: raise", test.expression
        elif isinstance(branch.orelse, cst.Else) and _raises(branch.orelse.body) and not _raises(branch.body):
            yield branch, "if ...: else: raise", test


def _raises(block: cst.BaseSuite) -> bool:
    """The block ends in a raise: the refusal itself."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not body:
        return False
    last = body[-1]
    lines = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return any(isinstance(small, cst.Raise) for small in lines)


def _alternatives(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`a or b or c` -> [a, b, c]; any other test is one alternative."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*_alternatives(test.left), *_alternatives(test.right)]
    return [test]


def _is_predicate_call(node: cst.BaseExpression) -> bool:
    """A call of a named helper with literal (or no) arguments: `has_cuda_capability(8, 9)`, `is_sm_at_least_89()`."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, (cst.Name, cst.Attribute)):
        return False
    return all(isinstance(arg.value, cst.Integer) and arg.keyword is None for arg in node.args)
