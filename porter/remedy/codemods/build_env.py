"""Build and environment codemods: nvcc-only extension flags (PT215), SDPA backend forcing (PT210),
CUDA-only environment knobs that have an AMD twin (PT403, PT405, PT213, PT218)."""

from __future__ import annotations

import re

import libcst as cst

from porter.remedy.codemods import CodemodResult, codemod
from porter.remedy.codemods._cst import LineScoped, code, describe, ensure_import, expr, finish, string_value, transform
from porter.targets import all_targets

# ---- PT215 nvcc-only flags -----------------------------------------------------------------------

# nvcc flag -> hipcc/clang equivalent ("" = drop on ROCm). idioms.md P15; clang's -ffast-math implies
# finite-math-only, which breaks -inf sentinels, hence -fno-finite-math-only.
_NVCC_ONLY = [
    (re.compile(r"^--?use_fast_math$"), ["-ffast-math", "-fno-finite-math-only"]),
    (re.compile(r"^-gencode(=.*)?$"), []),
    (re.compile(r"^--generate-code(=.*)?$"), []),
    (re.compile(r"^-arch(=|$)|^--gpu-architecture"), []),
    (re.compile(r"^-code(=|$)"), []),
    (re.compile(r"^-lineinfo$|^--generate-line-info$"), []),
    (re.compile(r"^--ptxas-options.*|^-Xptxas.*"), []),
    (re.compile(r"^--expt-relaxed-constexpr$|^--expt-extended-lambda$|^--extended-lambda$"), []),
    (re.compile(r"^-Xcompiler.*|^--compiler-options.*"), []),
    (re.compile(r"^--threads(=.*)?$|^-t\d*$"), []),
    (re.compile(r"^-maxrregcount.*|^--maxrregcount.*"), []),
]
_TAKES_VALUE = {
    "-gencode",
    "--generate-code",
    "-arch",
    "-code",
    "-Xptxas",
    "-Xcompiler",
    "--threads",
    "-t",
    "-maxrregcount",
}
_HIP_FLAG = "IS_HIP_EXTENSION"
_HIP_IMPORT = f"from torch.utils.cpp_extension import {_HIP_FLAG}"


def _translation(flag: str) -> list[str] | None:
    for pattern, replacement in _NVCC_ONLY:
        if pattern.search(flag):
            return replacement
    return None


def _split_flags(elements) -> tuple[list[str], list[str], list[str]] | None:
    """(common, hip-only, nvcc-only) element texts, or None when nothing is nvcc-only."""
    common: list[str] = []
    hip: list[str] = []
    nvcc: list[str] = []
    expect_value = False
    for element in elements:
        text = code(element.value) if isinstance(element, cst.Element) else code(element)
        flag = string_value(element.value) if isinstance(element, cst.Element) else None
        if expect_value:
            nvcc.append(text)
            expect_value = False
            continue
        translated = _translation(flag) if flag is not None else None
        if translated is None:
            common.append(text)
            continue
        nvcc.append(text)
        hip.extend(f'"{item}"' for item in translated if f'"{item}"' not in hip)
        expect_value = flag in _TAKES_VALUE
    return (common, hip, nvcc) if nvcc else None


class _NvccFlags(LineScoped):
    guarded = 0  # depth inside `... if IS_HIP_EXTENSION else ...` (already split: leave alone)

    def visit_IfExp(self, node):
        if _HIP_FLAG in code(node.test) or "version.hip" in code(node.test):
            self.guarded += 1

    def leave_IfExp(self, original, updated):
        if _HIP_FLAG in code(original.test) or "version.hip" in code(original.test):
            self.guarded -= 1
        return updated

    def leave_List(self, original, updated):
        if not self.in_scope(original) or self.guarded or _HIP_FLAG in code(updated):
            return updated
        split = _split_flags(updated.elements)
        if split is None:
            return updated
        common, hip, nvcc = split
        base = f"[{', '.join(common)}]"
        if self.ctx.exclusive:
            new = expr(f"[{', '.join(common + hip)}]")
        else:
            self.uses_import = True
            branch = f"([{', '.join(hip)}] if {_HIP_FLAG} else [{', '.join(nvcc)}])"
            new = expr(f"{base} + {branch}" if common else branch)
        self.changes.append(
            f"line {self.line_of(original)}: nvcc-only {', '.join(nvcc)} -> ROCm {', '.join(hip) or '(none)'}"
        )
        return new


@codemod("PT215")
def nvcc_flags(source, findings, target, ctx):
    transformer = _NvccFlags(findings, ctx, target)
    transformer.uses_import = False
    new = transform(source, transformer)
    if new == source:
        return None
    if transformer.uses_import:
        new = ensure_import(new, _HIP_IMPORT)
    arches = sorted({t.arch for t in all_targets().values() if t.is_amd})
    return CodemodResult(
        text=new,
        rationale=(
            "On ROCm the extension's nvcc flags go to hipcc/clang, which rejects nvcc-only options; they now apply only "
            f"when {_HIP_FLAG} is false, and ROCm gets clang equivalents (-ffast-math with -fno-finite-math-only keeps "
            "-inf sentinels). " + describe(transformer.changes)
        ),
        notes=[f'GPU architectures on ROCm come from PYTORCH_ROCM_ARCH (e.g. "{";".join(arches)}"), not -gencode.'],
        facts=target.facts("arch"),
    )


# ---- PT210 forced SDPA backends ------------------------------------------------------------------

_SDPA_ORDER = ["CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"]


class _Sdpa(LineScoped):
    def __init__(self, findings, ctx, target):
        super().__init__(findings, ctx, target)
        # (line, column) of each flags namedtuple construction the scan reported (`Config(True, False, ...)` spread into
        # sdp_kernel) -> enable_math's position among its fields; a call nested in its arguments starts elsewhere
        self.math_positions = {
            (f.line, f.column): f.data["math_position"] for f in findings if "math_position" in f.data
        }

    def leave_Call(self, original, updated):
        if not self.in_scope(original):
            return updated
        name = code(updated.func).rsplit(".", 1)[-1]
        if name == "sdpa_kernel" and updated.args:
            return self._priority_list(original, updated)
        if name == "sdp_kernel":
            return self._enable_fallbacks(original, updated)
        position = self.math_positions.get(self.start_of(original))
        if isinstance(updated.func, cst.Name) and position is not None:
            return self._math_in_record(original, updated, position)
        return updated

    def _math_in_record(self, original, updated, position: int):
        """`Config(True, False, False)` spread into sdp_kernel: math back on, the preferred backend first."""
        args = list(updated.args)
        for index, arg in enumerate(args):
            if arg.star:
                return updated
            named = arg.keyword is not None and arg.keyword.value == "enable_math"
            if (named or (arg.keyword is None and index == position)) and code(arg.value) == "False":
                args[index] = arg.with_changes(value=cst.Name("True"))
                self.changes.append(f"line {self.line_of(original)}: enable_math -> True in {code(original)}")
                return updated.with_changes(args=args)
        return updated

    def _priority_list(self, original, updated):
        first = updated.args[0]
        value = first.value
        members = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
        if not all(isinstance(m, cst.Attribute) for m in members):
            return updated
        prefix = code(members[0].value)
        present = [m.attr.value for m in members]
        missing = (
            [b for b in _SDPA_ORDER[_SDPA_ORDER.index(present[-1]) + 1 :] if b not in present]
            if present[-1] in _SDPA_ORDER
            else []
        )
        if not missing:
            return updated
        listed = ", ".join([code(m) for m in members] + [f"{prefix}.{b}" for b in missing])
        self.changes.append(f"line {self.line_of(original)}: adds fallbacks {', '.join(missing)}")
        return updated.with_changes(args=[first.with_changes(value=expr(f"[{listed}]"))] + list(updated.args[1:]))

    def _enable_fallbacks(self, original, updated):
        args = []
        changed = []
        for arg in updated.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key in ("enable_math", "enable_mem_efficient") and code(arg.value) == "False":
                arg = arg.with_changes(value=cst.Name("True"))
                changed.append(key)
            args.append(arg)
        if not changed:
            return updated
        self.changes.append(f"line {self.line_of(original)}: {', '.join(changed)} -> True")
        return updated.with_changes(args=args)


@codemod("PT210")
def sdpa_backends(source, findings, target, ctx):
    transformer = _Sdpa(findings, ctx, target)
    new = transform(source, transformer)
    rationale = (
        "cuDNN attention does not exist on ROCm and ROCm's flash/mem-efficient kernels (AOTriton/CK) cover fewer "
        "shapes, so forcing one backend fails where CUDA works; the preferred backend stays allowed and slower "
        "fallbacks are allowed after it."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("arch"))


# ---- Environment knobs with an AMD twin -------------------------------------------------------------


def _rocm_arch_list(_value: str) -> str:
    return ";".join(sorted({t.arch for t in all_targets().values() if t.is_amd}))


# CUDA variable -> (AMD variable, value mapping). idioms.md E03, E05, P13, P18.
_ENV_TWINS = {
    "CUDA_LAUNCH_BLOCKING": ("AMD_SERIALIZE_KERNEL", lambda v: "3" if v.strip() not in ("", "0") else "0"),
    "TORCH_CUDA_ARCH_LIST": ("PYTORCH_ROCM_ARCH", _rocm_arch_list),
    "PYTORCH_CUDA_ALLOC_CONF": ("PYTORCH_HIP_ALLOC_CONF", lambda v: v),
    "CUBLAS_WORKSPACE_CONFIG": ("HIPBLAS_WORKSPACE_CONFIG", lambda v: v),
}


_RULE_VARIABLES = {
    "PT403": {"CUDA_LAUNCH_BLOCKING"},
    "PT405": {"TORCH_CUDA_ARCH_LIST"},
    "PT213": {"PYTORCH_CUDA_ALLOC_CONF"},
    "PT218": {"CUBLAS_WORKSPACE_CONFIG"},
}
_ACTIVE: set[str] = set()  # the variables the current run's rules cover (set per call)


def _twin_for(node) -> tuple[str, str, str] | None:
    key = string_value(node)
    if key not in _ENV_TWINS or key not in _ACTIVE:
        return None
    twin, _ = _ENV_TWINS[key]
    return key, twin, ""


class _EnvTwin(LineScoped):
    """`os.environ["CUDA_X"] = v` gains `os.environ["AMD_X"] = v'`; env dicts gain the twin key."""

    def __init__(self, findings, ctx, target, source):
        super().__init__(findings, ctx, target)
        self.source = source

    def leave_SimpleStatementLine(self, original, updated):
        if not self.in_scope(original) or len(updated.body) != 1:
            return updated
        small = updated.body[0]
        twin_stmt = self._twin_statement(small, self.line_of(original))
        if twin_stmt is None:
            return updated
        return cst.FlattenSentinel([updated, updated.with_changes(body=[twin_stmt], leading_lines=[])])

    def _twin_statement(self, small, line: int):
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Subscript)
        ):
            sub = small.targets[0].target
            key_node = sub.slice[0].slice.value if sub.slice and isinstance(sub.slice[0].slice, cst.Index) else None
            value = string_value(small.value)
            twin_info = _twin_for(key_node) if key_node is not None else None
            if twin_info is None or value is None:
                return None
            key, twin, _ = twin_info
            if self._already_set(twin):
                return None
            new_value = _ENV_TWINS[key][1](value)
            self.changes.append(f"line {line}: {key}={value!r} -> also {twin}={new_value!r}")
            new_sub = sub.with_changes(
                slice=[sub.slice[0].with_changes(slice=cst.Index(cst.SimpleString(f'"{twin}"')))]
            )
            return small.with_changes(
                targets=[small.targets[0].with_changes(target=new_sub)], value=cst.SimpleString(f'"{new_value}"')
            )
        if (
            isinstance(small, cst.Expr)
            and isinstance(small.value, cst.Call)
            and code(small.value.func).endswith("setdefault")
        ):
            call = small.value
            twin_info = _twin_for(call.args[0].value) if len(call.args) == 2 else None
            if twin_info is None or string_value(call.args[1].value) is None:
                return None
            key, twin, _ = twin_info
            if self._already_set(twin):
                return None
            new_value = _ENV_TWINS[key][1](string_value(call.args[1].value))
            self.changes.append(f"line {line}: {key} -> also {twin}={new_value!r}")
            args = [
                call.args[0].with_changes(value=cst.SimpleString(f'"{twin}"')),
                call.args[1].with_changes(value=cst.SimpleString(f'"{new_value}"')),
            ]
            return small.with_changes(value=call.with_changes(args=args))
        return None

    def leave_Dict(self, original, updated):
        if not self.in_scope(original):
            return updated
        elements = list(updated.elements)
        keys = {string_value(e.key) for e in elements if isinstance(e, cst.DictElement)}
        added = []
        for element in updated.elements:
            if not isinstance(element, cst.DictElement) or _twin_for(element.key) is None:
                continue
            key, twin, _ = _twin_for(element.key)
            value = string_value(element.value)
            if twin in keys or value is None:
                continue
            new_value = _ENV_TWINS[key][1](value)
            added.append(cst.DictElement(cst.SimpleString(f'"{twin}"'), cst.SimpleString(f'"{new_value}"')))
            self.changes.append(f"line {self.line_of(original)}: env dict {key} -> also {twin}={new_value!r}")
        if not added:
            return updated
        if elements and elements[-1].comma is cst.MaybeSentinel.DEFAULT:
            elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(elements=elements + added)

    def _already_set(self, twin: str) -> bool:
        return twin in self.source


@codemod("PT403", "PT405", "PT213", "PT218")
def env_twins(source, findings, target, ctx):
    transformer = _EnvTwin(findings, ctx, target, source)
    _ACTIVE.clear()
    _ACTIVE.update(*(_RULE_VARIABLES.get(f.rule, set()) for f in findings))
    new = transform(source, transformer)
    rationale = (
        "The HIP runtime reads its own names for these knobs (AMD_SERIALIZE_KERNEL for launch blocking, "
        "PYTORCH_ROCM_ARCH for build arches, PYTORCH_HIP_ALLOC_CONF, HIPBLAS_WORKSPACE_CONFIG); the AMD variable "
        "is set beside the CUDA one, which keeps working on NVIDIA."
    )
    return finish(source, new, transformer, ctx, rationale, target.facts("arch"))
