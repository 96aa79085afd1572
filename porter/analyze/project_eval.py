"""What a platform test evaluates to on the target: a small abstract interpreter over `ast` snippets.

Values are Python values when the target decides them (`torch.version.hip` is a version string on a ROCm
build, `torch.version.cuda` is None, `torch.cuda.get_device_capability()` is the target's (9, 4),
`get_current_target().backend` is "hip", `gcnArchName` is the target's arch), or one of two markers:
PLATFORM (depends on the platform in a way the target's facts do not decide: a device property the specs do not give) and OPAQUE
(ordinary runtime data). Project predicates (`def is_hip(): return torch.version.hip is not None`,
`IS_TF32_SUPPORTED = IS_NVIDIA and cap >= 8`, `DEVICE_TYPE = get_device_type()`) are evaluated from
their definitions, through the project's imports, so a name means what its definition says, not what it
is called. Names that resolve nowhere fall back to what they are called (`is_hip()`, `IS_NVIDIA`).
Function bodies run path by path: after a branch that exits (`raise`, `return`) only the other branch's bindings
hold, narrowed by its test as mypy narrows (`if v not in _DECODES: raise` leaves v one of the keys; a local left
one constant is that constant), and so after an `assert`.
"""

from __future__ import annotations

import ast
import operator
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from porter.analyze.project_facts import MISSING_COMMAND_ERRORS, last_name


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


PLATFORM = _Marker("PLATFORM")  # platform-dependent, not decided by the target's facts
OPAQUE = _Marker("OPAQUE")  # runtime data, not about the platform
UNDECIDED = (PLATFORM, OPAQUE)
NOT_FOUND = _Marker("NOT_FOUND")  # a resolver's answer for a name it knows nothing about (None is a value)
# a non-empty string whose text is runtime data: an f-string with literal text (`f"ROCm {hip}: {what} is refused"`,
# a refusal helper's reason). It is true and not None; any other comparison is undecided.
SOME_TEXT = _Marker("SOME_TEXT")
MAX_DEPTH = 24


class Capability(tuple):
    """torch's (major, minor) and vllm's DeviceCapability alike: compares as a tuple, has .major/.to_int()."""

    @property
    def major(self) -> int:
        return self[0]

    @property
    def minor(self) -> int:
        return self[1]

    def to_int(self) -> int:
        return self[0] * 10 + self[1]


@dataclass(frozen=True)
class Obj:
    """A platform object whose attributes the target decides (device properties, Triton's target)."""

    kind: str
    attrs: tuple[tuple[str, Any], ...]

    def get(self, name: str) -> Any:
        return dict(self.attrs).get(name, PLATFORM)


@dataclass(frozen=True)
class Fn:
    """A function whose body can be run abstractly (module, scope it is defined in, source)."""

    module: str
    qualname: str
    source: str


@dataclass(frozen=True)
class Native:
    """A callable the target decides: calling it gives `value` (platform methods, known torch calls)."""

    value: Any


@dataclass(frozen=True)
class Keywords:
    """A dict literal with string keys, as a call spreads it into keywords (`{"PDL": True, "launch_pdl": True}`)."""

    items: tuple[tuple[str, Any], ...]

    def value(self, name: str, default: Any) -> Any:
        """What a call spreading this dict passes for parameter `name` (its default when the dict leaves it out)."""
        return dict(self.items).get(name, default)


@dataclass(frozen=True)
class RecordType:
    """A project's dataclass or NamedTuple: calling it builds a Record (facts `records`)."""

    module: str
    name: str
    fields: tuple[str, ...]
    properties: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Record:
    """An instance of a RecordType whose fields hold what its construction passed (a probe object: eagle-harness's
    `Gpu(index, props.name, "amd", arch, 0)` on ROCm); a field or property it cannot tell is undecided."""

    kind: RecordType
    values: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Instance:
    """Some object of a record type, as a parameter annotated with it holds in a default run (`args:
    "HiPAttentionArgs"`): a field reads as what every object of the type may hold there (Project.field_value)."""

    kind: RecordType


@dataclass(frozen=True)
class KeywordsOf:
    """A function's `**kwargs` parameter in a default run: the keywords its project callers pass beyond its named
    parameters (Project._keywords_passed)."""

    module: str
    qualname: str


@dataclass(frozen=True)
class MaybeNone:
    """A Record on some paths and None on the others (`return _probe(i) if i is not None else None`): a test for
    None is undecided, but an attribute read runs only where it is the Record (on None it raises)."""

    record: Record


class PlatformRef:
    """A platform object (vllm's current_platform, self in a Platform class): answers is_rocm() & co."""


# Platform-layer methods (vllm/sglang style current_platform) -> what they return on the target. An NVIDIA
# target is evaluated too: code whose platform tests are False there is written for AMD (Project.amd_only).
def platform_methods(target) -> dict[str, Any]:
    capability = Capability(target.capability)
    amd = target.vendor == "amd"
    return {
        "is_rocm": amd,
        "is_hip": amd,
        "is_cuda": not amd,
        "is_cuda_alike": True,
        "is_nvidia": not amd,
        "is_xpu": False,
        "is_tpu": False,
        "is_cpu": False,
        "is_hpu": False,
        "is_neuron": False,
        "is_npu": False,
        "is_out_of_tree": False,
        "is_mps": False,
        "is_musa": False,
        "is_fp8_fnuz": target.fp8_family == "fnuz",
        "get_device_capability": capability,
        "has_device_capability": lambda n=None, *_: _has_capability(capability, n),
        "is_device_capability": lambda n=None, *_: _is_capability(capability, n),
    }


def _has_capability(capability: Capability, wanted: Any) -> Any:
    if isinstance(wanted, tuple):
        return capability >= wanted
    return capability.to_int() >= wanted if isinstance(wanted, int) else PLATFORM


def _is_capability(capability: Capability, wanted: Any) -> Any:
    if isinstance(wanted, tuple):
        return tuple(capability) == wanted
    return capability.to_int() == wanted if isinstance(wanted, int) else PLATFORM


def _regex(function: Callable[[str, str], Any]) -> Native:
    """re.match & co. on decided strings: arch predicates parse gcnArchName (`re.match(r"gfx([0-9a-f]{3})", arch)`)."""

    def call(*args: Any) -> Any:
        if len(args) != 2 or not all(isinstance(a, str) for a in args):
            return OPAQUE
        try:
            return function(args[0], args[1])
        except re.error:
            return OPAQUE

    return Native(call)


_REGEX_CALLS = {f"re.{name}": _regex(getattr(re, name)) for name in ("match", "fullmatch", "search")}
# Members only one of Triton's compiler backends defines (CUDABackend in backends/nvidia/compiler.py, HIPBackend in
# backends/amd/compiler.py): `hasattr(backend, "_parse_arch")` is how tools built on Triton's compiler tell them
# apart (triton-runner's PTX-version query). Other members are shared, or not known here: undecided.
_NVIDIA_BACKEND_MEMBERS = frozenset({"_parse_arch", "make_ptx", "make_cubin"})
_AMD_BACKEND_MEMBERS = frozenset({"make_amdgcn", "make_hsaco", "path_to_rocm_lld"})


def _triton_backend(amd: bool) -> Obj:
    """What `make_backend(target)` returns: an object whose vendor-only members `hasattr` can decide."""
    mine, theirs = (
        (_AMD_BACKEND_MEMBERS, _NVIDIA_BACKEND_MEMBERS) if amd else (_NVIDIA_BACKEND_MEMBERS, _AMD_BACKEND_MEMBERS)
    )
    return Obj("triton_backend", tuple((name, OPAQUE) for name in sorted(mine)) + (("", tuple(sorted(theirs))),))


def has_member(value: Any, name: Any) -> Any:
    """`hasattr(value, name)` where the target decides it (a Triton backend's vendor-only member), else OPAQUE."""
    if not (isinstance(value, Obj) and value.kind == "triton_backend" and isinstance(name, str)):
        return OPAQUE
    members = dict(value.attrs)
    if name in members and name:
        return True
    return False if name in members.get("", ()) else OPAQUE


def known_values(target) -> dict[str, Any]:
    """Qualified names whose value the target decides (on a ROCm build of PyTorch and Triton's AMD backend, or on
    a CUDA build and Triton's NVIDIA backend for an NVIDIA target)."""
    amd = target.vendor == "amd"
    capability = Capability(target.capability)
    # the marketing name both builds report as the device name (`"NVIDIA" in torch.cuda.get_device_name()`)
    product_name = target.extra.get("product_name", PLATFORM)
    # ROCm reports the gfx arch with its feature flags as gcnArchName; CUDA builds report the device name there
    arch_name = f"{target.arch}:sramecc+:xnack-" if amd else product_name
    properties = Obj(
        "props",
        (
            ("gcnArchName", arch_name),
            ("major", capability[0]),
            ("minor", capability[1]),
            ("warp_size", target.wave_size),
            ("multi_processor_count", target.units),
            ("name", product_name),
        ),
    )
    triton_arch = target.arch if amd else target.triton["arch"]
    triton_target = Obj(
        "target", (("backend", target.triton["backend"]), ("arch", triton_arch), ("warp_size", target.wave_size))
    )
    return {
        "torch.version.hip": "6.4" if amd else None,
        "torch.version.cuda": None if amd else "12.8",
        "torch.utils.cpp_extension.ROCM_HOME": "/opt/rocm" if amd else None,
        "torch.utils.cpp_extension.CUDA_HOME": None if amd else "/usr/local/cuda",
        "torch.utils.cpp_extension.IS_HIP_EXTENSION": amd,
        "torch.cuda.get_device_capability": Native(capability),
        "torch.cuda.get_device_properties": Native(properties),
        "torch.cuda.get_device_name": Native(product_name),
        "torch.cuda.is_available": Native(True),
        "torch.cuda.is_bf16_supported": Native(True),
        "torch.cuda.current_device": Native(0),
        "triton.runtime.driver.active": Obj("driver", (("get_current_target", Native(triton_target)),)),
        "triton.runtime.driver.active.get_current_target": Native(triton_target),
        "triton.compiler.compiler.make_backend": Native(_triton_backend(amd)),
        "triton.compiler.make_backend": Native(_triton_backend(amd)),
        "torch.device": Native(OPAQUE),
        "typing.TYPE_CHECKING": False,
        "typing_extensions.TYPE_CHECKING": False,
        **_REGEX_CALLS,
    }


# Names evaluated by what they are called, when no definition is found (an installed dependency's helper).
_ROCM_TRUE = re.compile(
    r"_?(is_hip|IS_HIP|is_rocm|IS_ROCM|is_rocm_pytorch|on_rocm|ON_ROCM|use_rocm|USE_ROCM|is_amd|IS_AMD|"
    r"IS_HIP_EXTENSION|is_cuda_alike|is_cdna|IS_CDNA)\Z"
)
_CUDA_TRUE = re.compile(r"_?(is_cuda|IS_CUDA|is_nvidia|IS_NVIDIA|on_cuda|ON_CUDA|use_cuda_build)\Z")
_OTHER_DEVICE = re.compile(  # another device type, or AMD's consumer GPUs: false on an Instinct and on NVIDIA
    r"_?(is_xpu|IS_XPU|is_npu|IS_NPU|is_hpu|is_tpu|is_mps|is_musa|IS_MUSA|is_mlu|is_ascend|is_rdna|is_navi)\Z"
)
_ARCH_NAME = re.compile(
    r"_?(is_sm_?\d+\w*|IS_SM_?\d+\w*|is_hopper|IS_HOPPER|is_blackwell|IS_BLACKWELL|is_ampere|"
    r"supports_tma|has_tma|HAS_TMA|is_tma_supported|is_fp8_fnuz|is_gfx\w+)\Z"
)
# Programmatic dependent launch (griddepcontrol, launch_pdl) is a CUDA feature of sm_90 and later: a predicate asking
# whether the hardware has it on (tokenspeed_kernel's `pdl_enabled()`, `is_hopper_plus` underneath) is False on AMD.
# A switch a user sets (`USE_PDL`, `enable_pdl`) is not such a predicate: set on AMD, it is where gdc_wait fails.
_PDL_NAME = re.compile(r"_?(is_)?(pdl_enabled|pdl_supported|supports_pdl)\Z")
# AMD arch predicates that name what they test: `is_gfx950()`, `on_gfx942()`, `_ON_GFX95X`, `is_gfx9()` (a prefix
# of the target's gfx arch), `is_cdna3()` / `IS_CDNA4` (the target's family). None of them holds on NVIDIA.
_GFX_NAME = re.compile(r"_?(?:is|on)_(gfx[0-9a-f]+?)x?\Z", re.IGNORECASE)
_CDNA_NAME = re.compile(r"_?(?:is|on)_(cdna\d)\Z", re.IGNORECASE)


def by_name(name: str, target, arch_names: bool = True) -> Any:
    """What a platform predicate called `name` answers on the target (None: the name says nothing). `arch_names`
    False for a method or attribute of an object porter does not know: sglang's `backend.is_gfx95()` asks which
    GEMM backend was chosen, not which GPU runs, so an arch name there stays undecided."""
    amd = target.vendor == "amd"
    if _ROCM_TRUE.match(name):
        return amd
    if _CUDA_TRUE.match(name):
        return not amd
    if _OTHER_DEVICE.match(name):
        return False
    if _PDL_NAME.match(name):
        return False if amd else PLATFORM
    if name.lstrip("_") == "is_fp8_fnuz":
        return target.fp8_family == "fnuz"
    arch = _GFX_NAME.match(name) or _CDNA_NAME.match(name)
    if arch is not None and arch_names:
        tested = arch.group(1).lower()
        return amd and (target.arch.startswith(tested) or target.family.lower() == tested)
    if _ARCH_NAME.match(name):
        return PLATFORM
    return None


def merge(values: list[Any], platform_branch: bool) -> Any:
    """One value for several paths: equal decided values stay; otherwise PLATFORM if the choice was."""
    if not values:
        return OPAQUE
    first = values[0]
    if all(_same(first, v) for v in values[1:]):
        return first
    maybe = _record_or_none(values)
    if maybe is not None:
        return maybe
    if platform_branch or any(v is PLATFORM for v in values):
        return PLATFORM
    return OPAQUE


def _record_or_none(values: list[Any]) -> MaybeNone | None:
    """The one Record among `values` when every other value is None (or that same Record, maybe None already)."""
    try:
        records = {v.record if isinstance(v, MaybeNone) else v for v in values if v is not None}
    except TypeError:  # a field holding an unhashable value
        return None
    if len(records) != 1 or not isinstance(next(iter(records)), Record):
        return None
    return MaybeNone(next(iter(records)))


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, _Marker) or isinstance(b, _Marker) or type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def truth(value: Any) -> Any:
    """True / False when decided, else the marker."""
    if value is SOME_TEXT:
        return True
    if isinstance(value, _Marker):
        return value
    if isinstance(value, Keywords):
        return OPAQUE  # a module-level dict is often a cache that fills at run time: its emptiness is data
    if isinstance(value, (Fn, Native, Obj, PlatformRef, Record, RecordType)):
        return True
    if isinstance(value, MaybeNone):
        return OPAQUE
    try:
        return bool(value)
    except Exception:
        return OPAQUE


_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: lambda a, b: a is b if b is None or a is None else a == b,
    ast.IsNot: lambda a, b: a is not b if b is None or a is None else a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
# a comparison of a non-empty string with None, by operator: `why is None` is False
_NONE_TESTS: dict[type, bool] = {ast.Is: False, ast.Eq: False, ast.IsNot: True, ast.NotEq: True}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
}
_STR_METHODS = {"startswith", "endswith", "lower", "upper", "split", "strip", "replace", "find", "partition"}


# Variables a launcher, a scheduler or the system sets: their defaults say nothing about what runs by default.
_PROVIDED_ENV = re.compile(
    r"(RANK|LOCAL_RANK|GROUP_RANK|ROLE_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|HOME|PATH|USER|"
    r"HOSTNAME|PYTHONPATH|LD_LIBRARY_PATH|TMPDIR|VIRTUAL_ENV|\w*_VISIBLE_DEVICES|CUDA_HOME|CUDA_PATH|ROCM_HOME|"
    r"ROCM_PATH|HIP_PATH|(TORCHELASTIC|SLURM|OMPI|PMI|PMIX|MPI|PBS|LSB|KUBERNETES|CONDA|XDG)_\w*)\Z"
)


class UnsetEnvironment:
    """`os.environ` as a default run sees it: a project's own switches unset, launcher-provided ones unknown."""

    def __contains__(self, name: object) -> bool:
        if not _switch_name(name):
            raise LookupError(name)  # the comparison reads as undecided
        return False

    def __getitem__(self, name: object) -> Any:
        raise KeyError(name)

    def get(self, name: Any = OPAQUE, default: Any = None, *_: Any) -> Any:
        return default if _switch_name(name) else OPAQUE


def _switch_name(name: object) -> bool:
    """A variable a project reads as its own switch (unset by default), not one a launcher provides."""
    return isinstance(name, str) and not _PROVIDED_ENV.match(name)


def unset_environment() -> dict[str, Any]:
    """Known values that read the environment as unset (`os.environ.get("X", "0")` is "0"): for asking whether
    code runs by default, never for what the platform decides."""
    environment = UnsetEnvironment()
    return {"os.environ": environment, "os.environ.get": Native(environment.get), "os.getenv": Native(environment.get)}


class Scope:
    """Where a snippet is evaluated: module key, def qualname ('' at module level), local bindings."""

    def __init__(self, module: str, qualname: str, bindings: dict[str, Any] | None = None) -> None:
        self.module, self.qualname, self.bindings = module, qualname, bindings if bindings is not None else {}


class Evaluator:
    """Evaluates expressions under the target's facts; `resolver` supplies names (see porter.analyze.project)."""

    def __init__(self, resolver, target, environment_unset: bool = False) -> None:
        self.resolver = resolver
        self.target = target
        self.known = known_values(target) | (unset_environment() if environment_unset else {})
        self.methods = platform_methods(target)
        self.depth = 0

    def source(self, text: str, scope: Scope) -> Any:
        if not text:
            return OPAQUE
        try:
            expression = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return OPAQUE
        return self.expr(expression, scope)

    def expr(self, node: ast.expr, scope: Scope) -> Any:
        if self.depth > MAX_DEPTH:
            return OPAQUE
        self.depth += 1
        try:
            method = getattr(self, "_" + type(node).__name__.lower(), None)
            return method(node, scope) if method is not None else OPAQUE
        except RecursionError:
            return OPAQUE
        finally:
            self.depth -= 1

    # -- leaves -------------------------------------------------------------------------------
    def _constant(self, node: ast.Constant, scope: Scope) -> Any:
        return node.value

    def _name(self, node: ast.Name, scope: Scope) -> Any:
        if node.id in scope.bindings:
            return scope.bindings[node.id]
        return self.resolver.name(node.id, scope, self)

    def _attribute(self, node: ast.Attribute, scope: Scope) -> Any:
        dotted = _dotted(node)
        if dotted is not None:
            value = self.resolver.dotted(dotted, scope, self)
            if value is not NOT_FOUND:
                return value
        base = self.expr(node.value, scope)
        return self.attribute_of(base, node.attr)

    def attribute_of(self, base: Any, attr: str) -> Any:
        if isinstance(base, Obj):
            return base.get(attr)
        if isinstance(base, Instance):
            return self.resolver.field_value(base.kind, attr) if attr in base.kind.fields else OPAQUE
        if isinstance(base, (Record, MaybeNone)):
            return self._record_attribute(base.record if isinstance(base, MaybeNone) else base, attr)
        if isinstance(base, PlatformRef):
            found = self.methods.get(attr)
            return Native(found) if found is not None and not callable(found) else (found or OPAQUE)
        if isinstance(base, Capability) and attr in ("major", "minor"):
            return getattr(base, attr)
        if isinstance(base, Capability) and attr == "to_int":
            return Native(base.to_int())
        if isinstance(base, str) and attr in _STR_METHODS:
            return lambda *args: getattr(base, attr)(*args)
        if isinstance(base, re.Match) and attr in ("group", "groups", "start", "end"):
            return lambda *args: getattr(base, attr)(*args)
        if base is PLATFORM:
            return PLATFORM
        if base is OPAQUE and attr.isupper() and len(attr) > 2:  # `self.IS_HIP`, `cls.USE_ROCM`: a flag by name
            named = by_name(attr, self.target, arch_names=False)
            return OPAQUE if named is None else named
        return OPAQUE

    def _record_attribute(self, record: Record, attr: str) -> Any:
        """A field of a probe object, or a short property of its class run with `self` bound to it."""
        values = dict(record.values)
        if attr in values:
            return values[attr]
        source = dict(record.kind.properties).get(attr)
        if source is None:
            return OPAQUE
        return self.run_function(Fn(record.kind.module, f"{record.kind.name}.{attr}", source), {"self": record})

    def _construct(self, kind: RecordType, node: ast.Call, scope: Scope) -> Any:
        """`Gpu(index, props.name, "amd", arch, 0)`: a Record of what each field is passed (undecided when left to a
        default or spread from `*args` / `**kwargs`)."""
        if len(node.args) > len(kind.fields) or any(isinstance(a, ast.Starred) for a in node.args):
            return OPAQUE
        values = {field: self.expr(arg, scope) for field, arg in zip(kind.fields, node.args)}
        for keyword in node.keywords:
            if keyword.arg is None or keyword.arg not in kind.fields:
                return OPAQUE
            values[keyword.arg] = self.expr(keyword.value, scope)
        return Record(kind, tuple((field, values.get(field, OPAQUE)) for field in kind.fields))

    # -- operators ----------------------------------------------------------------------------
    def _boolop(self, node: ast.BoolOp, scope: Scope) -> Any:
        is_and = isinstance(node.op, ast.And)
        pending: list[Any] = []
        value: Any = None
        for operand in node.values:
            value = self.expr(operand, scope)
            decided = truth(value)
            if decided is (not is_and):  # True in `or`, False in `and`: the answer whatever came before
                return value
            if decided in UNDECIDED:
                pending.append(decided)
        if pending:
            return PLATFORM if PLATFORM in pending else OPAQUE
        return value

    def _unaryop(self, node: ast.UnaryOp, scope: Scope) -> Any:
        value = self.expr(node.operand, scope)
        if isinstance(node.op, ast.Not):
            decided = truth(value)
            return decided if decided in UNDECIDED else not decided
        if isinstance(value, _Marker) or not isinstance(value, (int, float)):
            return value if isinstance(value, _Marker) else OPAQUE
        return -value if isinstance(node.op, ast.USub) else value

    def _compare(self, node: ast.Compare, scope: Scope) -> Any:
        left = self.expr(node.left, scope)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node, scope)
            if isinstance(left, MaybeNone) or isinstance(right, MaybeNone):
                return OPAQUE  # `g is not None`: the path decides
            if SOME_TEXT in (left, right) and None in (left, right) and type(op) in _NONE_TESTS:
                outcome = _NONE_TESTS[type(op)]  # a reason string is never None
                if not outcome:
                    return False
                left = right
                continue
            if isinstance(left, _Marker) or isinstance(right, _Marker) or _undecided_inside(right):
                undecided = [v for v in (left, right) if isinstance(v, _Marker)]
                return PLATFORM if PLATFORM in undecided or _undecided_inside(right) == PLATFORM else OPAQUE
            try:
                outcome = _COMPARE[type(op)](left, right)
            except Exception:
                return OPAQUE
            if not outcome:
                return False
            left = right
        return result

    def _binop(self, node: ast.BinOp, scope: Scope) -> Any:
        left, right = self.expr(node.left, scope), self.expr(node.right, scope)
        for value in (left, right):
            if isinstance(value, _Marker):
                return value
        function = _BINARY.get(type(node.op))
        try:
            return function(left, right) if function is not None else OPAQUE
        except Exception:
            return OPAQUE

    def _subscript(self, node: ast.Subscript, scope: Scope) -> Any:
        memo = self._memo_read(node, scope)
        if memo is not None:
            return memo
        value = self.expr(node.value, scope)
        index = self.expr(node.slice, scope)
        if isinstance(value, _Marker):
            return value
        if isinstance(index, _Marker):
            return index
        if isinstance(value, Keywords):  # a mapping literal read at a key it holds (`_DECODES[decode]`)
            return dict(value.items).get(index, OPAQUE) if isinstance(index, str) else OPAQUE
        try:
            found = value[index]
        except Exception:
            return OPAQUE
        return found

    def _memo_read(self, node: ast.Subscript, scope: Scope) -> Any:
        """`_CACHE[key]` in a function that fills a module-level `_CACHE = {}` by hand (`_CACHE[key] = 1 if cap <
        (8, 9) else 0`): one of the values the function stores. None when that is not the pattern."""
        if not isinstance(node.value, ast.Name):
            return None
        stored = scope.bindings.get(_stored_key(node.value.id))
        if not isinstance(stored, Stored) or node.value.id in scope.bindings:
            return None
        if not self.resolver.empty_dict_at_module_level(scope.module, node.value.id):
            return None
        return merge(list(stored), False)

    def _joinedstr(self, node: ast.JoinedStr, scope: Scope) -> Any:
        """An f-string: its text when every part is decided, else SOME_TEXT when its literal text is not empty (a
        refusal helper's reason, `f"ROCm {hip}: {what} is not supported"`), which is all a test of it asks."""
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            value = self.expr(part.value, scope) if isinstance(part, ast.FormattedValue) else OPAQUE
            plain = isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1
            if isinstance(value, _Marker) or not plain:  # runtime data, or a format this does not reproduce
                literal = any(isinstance(p, ast.Constant) and p.value for p in node.values)
                return SOME_TEXT if literal else OPAQUE
            parts.append(str(value))
        return "".join(parts)

    def _ifexp(self, node: ast.IfExp, scope: Scope) -> Any:
        decided = truth(self.expr(node.test, scope))
        if decided is True:
            return self.expr(node.body, scope)
        if decided is False:
            return self.expr(node.orelse, scope)
        return merge([self.expr(node.body, scope), self.expr(node.orelse, scope)], decided is PLATFORM)

    def _tuple(self, node: ast.Tuple | ast.List, scope: Scope) -> Any:
        values = [self.expr(e, scope) for e in node.elts]
        return tuple(values)

    _list = _tuple
    _set = _tuple

    def _dict(self, node: ast.Dict, scope: Scope) -> Any:
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            return OPAQUE  # a `**spread` inside the literal, or computed keys
        pairs = ((k.value, self.expr(v, scope)) for k, v in zip(node.keys, node.values))  # type: ignore[union-attr]
        return Keywords(tuple(sorted(pairs, key=lambda pair: pair[0])))

    # -- calls ----------------------------------------------------------------------------------
    def _call(self, node: ast.Call, scope: Scope) -> Any:
        func = self.expr(node.func, scope)
        if isinstance(node.func, ast.Name) and node.func.id in (
            "getattr",
            "hasattr",
            "str",
            "int",
            "bool",
            "tuple",
            "len",
        ):
            return self._builtin(node, scope)
        if isinstance(node.func, ast.Name) and node.func.id == "dict" and func is OPAQUE:
            return self._keywords(node, scope)
        if isinstance(func, Native):
            value = func.value
            if callable(value):
                return value(*[self.expr(a, scope) for a in node.args])
            return value
        if isinstance(func, Fn):
            return self.resolver.call(func, self)
        if isinstance(func, RecordType):
            return self._construct(func, node, scope)
        if callable(func) and not isinstance(func, type):
            try:
                return func(*[self.expr(a, scope) for a in node.args])
            except Exception:
                return OPAQUE
        if isinstance(func, bool):  # a config statement names a predicate: calling it gives its value
            return func
        if func is OPAQUE and isinstance(node.func, ast.Attribute):  # `self.is_rocm()`, `cls.is_fp8_fnuz()`
            return self._method_by_name(node, scope)
        return func if func is PLATFORM else OPAQUE

    def _keywords(self, node: ast.Call, scope: Scope) -> Any:
        """`dict(BLOCK=bn, num_warps=4, **pdl)`: launch keywords gathered in a local (grouped-nf4-gemm's `common`),
        with what each spread mapping holds on the target; undecided when one is (or positional data is passed)."""
        if node.args:
            return OPAQUE
        items: dict[str, Any] = {}
        for keyword in node.keywords:
            value = self.expr(keyword.value, scope)
            if keyword.arg is not None:
                items[keyword.arg] = value
            elif isinstance(value, Keywords):
                items.update(value.items)
            else:
                return OPAQUE
        return Keywords(tuple(sorted(items.items(), key=lambda pair: pair[0])))

    def _method_by_name(self, node: ast.Call, scope: Scope) -> Any:
        if not isinstance(node.func, ast.Attribute):
            return OPAQUE
        attr = node.func.attr
        method = self.methods.get(attr)
        if method is not None:
            if callable(method):
                return method(*[self.expr(a, scope) for a in node.args])
            return method
        named = by_name(attr, self.target, arch_names=False)
        return OPAQUE if named is None else named

    def _builtin(self, node: ast.Call, scope: Scope) -> Any:
        if not isinstance(node.func, ast.Name):
            return OPAQUE
        name = node.func.id
        args = [self.expr(a, scope) for a in node.args]
        if name == "getattr" and len(node.args) >= 2 and isinstance(args[1], str):
            found = self.expr(ast.Attribute(value=node.args[0], attr=args[1], ctx=ast.Load()), scope)
            if found is None and len(args) > 2:
                return args[2]
            return found
        if name == "hasattr":
            return has_member(args[0], args[1]) if len(args) == 2 else OPAQUE
        if name == "int" and len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], int):
            try:  # int("942", 16): an arch number parsed from gcnArchName
                return int(args[0], args[1])
            except ValueError:
                return OPAQUE
        if len(args) != 1 or isinstance(args[0], _Marker):
            return args[0] if args and isinstance(args[0], _Marker) else OPAQUE
        conversions: dict[str, Callable[[Any], Any]] = {
            "str": str,
            "int": int,
            "bool": bool,
            "tuple": tuple,
            "len": len,
        }
        try:
            return conversions[name](args[0])
        except Exception:
            return OPAQUE

    # -- function bodies ------------------------------------------------------------------------
    def run_function(self, fn: Fn, defaults: dict[str, Any]) -> Any:
        try:
            tree = ast.parse(textwrap.dedent(fn.source))
        except (SyntaxError, ValueError, RecursionError):
            return OPAQUE
        definition = next((s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if definition is None:
            return OPAQUE
        scope = Scope(fn.module, fn.qualname, dict(defaults))
        outcomes, falls_through = self._block(definition.body, scope, False)
        if falls_through:
            outcomes.append((None, False))
        return merge([value for value, _ in outcomes], any(platform for _, platform in outcomes))

    def _block(
        self, body: list[ast.stmt], scope: Scope, platform: bool, catching: bool = False
    ) -> tuple[list[tuple[Any, bool]], bool]:
        """The outcomes of a block and whether it falls through. `catching`: the block lies in a `try` body a
        handler may catch, or in a `with` body whose manager may suppress (`with suppress(ValueError)`): a raise
        there goes on after the statement, so it neither ends the path nor narrows what follows."""
        outcomes: list[tuple[Any, bool]] = []
        for statement in body:
            if isinstance(statement, ast.Return):
                value = self.expr(statement.value, scope) if statement.value is not None else None
                outcomes.append((value, platform))
                return outcomes, False
            if isinstance(statement, ast.Raise):
                return outcomes, catching
            if isinstance(statement, ast.If):
                found, falls = self._if(statement, scope, platform, catching)
                outcomes.extend(found)
                if not falls:
                    return outcomes, False
            elif isinstance(statement, (ast.Try, ast.With)):
                taken = statement.body
                if isinstance(statement, ast.Try) and self._probe_fails(statement):
                    handler = _missing_command_handler(statement)
                    taken = handler.body if handler is not None else taken
                inner = catching or (taken is statement.body and _may_catch(statement))
                found, falls = self._block(taken, scope, platform, inner)
                outcomes.extend(found)
                if not falls:
                    return outcomes, False
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
                self._assign(statement, scope)
            elif isinstance(statement, ast.AugAssign):
                self._augmented_assign(statement, scope)
            elif isinstance(statement, ast.Assert):
                if not catching:  # a caught AssertionError goes on where the assertion failed
                    self._narrow(statement.test, scope, holds=True)  # what follows runs where the assertion held
            elif isinstance(statement, ast.Expr):
                self._mutating_call(statement.value, scope)
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                self.resolver.local_import(statement, scope)
            elif isinstance(statement, (ast.For, ast.While, ast.AsyncFor)):
                found, _ = self._block(statement.body, scope, platform, catching)
                outcomes.extend((OPAQUE if not isinstance(v, _Marker) else v, p) for v, p in found)
        return outcomes, True

    def _probe_fails(self, statement: ast.Try) -> bool:
        """The try body runs another vendor's SMI tool (`subprocess.check_output("nvidia-smi")`, optimum-benchmark's
        is_nvidia_system()): the tool is absent on the target's machines, so its handler is what runs there."""
        for node in ast.walk(ast.Module(body=statement.body, type_ignores=[])):
            if not isinstance(node, ast.Call) or not node.args or last_name(node.func) not in _RUNS_COMMAND:
                continue
            command = node.args[0]
            if isinstance(command, (ast.List, ast.Tuple)) and command.elts:
                command = command.elts[0]
            if isinstance(command, ast.Constant) and isinstance(command.value, str) and command.value.split():
                vendor = _VENDOR_TOOLS.get(command.value.split()[0])
                if vendor is not None:
                    return vendor != self.target.vendor
        return False

    def _if(self, node: ast.If, scope: Scope, platform: bool, catching: bool = False):
        decided = truth(self.expr(node.test, scope))
        if decided is True:
            return self._block(node.body, scope, platform, catching)
        if decided is False:
            return self._block(node.orelse, scope, platform, catching)
        branch_platform = platform or decided is PLATFORM
        before = dict(scope.bindings)
        first, falls_first = self._block(node.body, scope, branch_platform, catching)
        after_first, scope.bindings = scope.bindings, dict(before)
        second, falls_second = self._block(node.orelse, scope, branch_platform, catching)
        if falls_first != falls_second:  # one branch raises or returns: what follows runs after the other alone
            exited, scope.bindings = (scope.bindings, after_first) if falls_first else (after_first, scope.bindings)
            for name, value in exited.items():  # what the exiting branch stored may be read by a later call
                if isinstance(value, Stored):
                    scope.bindings[name] = Stored(_stored(scope.bindings.get(name)) + tuple(value))
            self._narrow(node.test, scope, holds=falls_first)
            return first + second, True
        for name in set(after_first) | set(scope.bindings):
            a, b = after_first.get(name, OPAQUE), scope.bindings.get(name, OPAQUE)
            if isinstance(a, Stored) or isinstance(b, Stored):  # what either branch stored may be read later
                scope.bindings[name] = Stored(_stored(a) + _stored(b))
            else:
                scope.bindings[name] = merge([a, b], branch_platform)
        return first + second, falls_first or falls_second

    def _narrow(self, test: ast.expr, scope: Scope, holds: bool) -> None:
        """What follows a guard that exits (`if v not in _DECODES: raise`, `if v == "prmt32" and not compiled:
        raise`) runs only where the test is `holds`: a local compared with constants keeps the values that pass it,
        and one left a single value is that value (an environment override narrowed to the choices the target
        accepts, as mypy narrows a Literal union)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self._narrow(test.operand, scope, not holds)
            return
        if isinstance(test, ast.BoolOp):
            # `a and b` failing with `a` true on the target narrows by `b` failing (and `a or b` holding alike)
            if isinstance(test.op, ast.And) != holds:
                undecided = [v for v in test.values if truth(self.expr(v, scope)) is not (not holds)]
                if len(undecided) == 1:
                    self._narrow(undecided[0], scope, holds)
            else:
                for value in test.values:
                    self._narrow(value, scope, holds)
            return
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
            return
        name, op = test.left.id, type(test.ops[0])
        if not isinstance(self.expr(test.left, scope), _Marker):
            return  # already decided
        right = self.expr(test.comparators[0], scope)
        if op in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot):
            keeps_equal = (op in (ast.Eq, ast.Is)) == holds
            choices = _choices(scope.bindings.get(_choices_key(name)))
            if keeps_equal and _plain_constant(right):
                choices = (right,)
            elif choices is not None and _plain_constant(right):
                choices = tuple(c for c in choices if not _same(c, right))
        elif op in (ast.In, ast.NotIn):
            members = _members(right)
            if members is None:
                return
            keeps_in = (op is ast.In) == holds
            known = _choices(scope.bindings.get(_choices_key(name)))
            if keeps_in:
                choices = members if known is None else tuple(c for c in known if any(_same(c, m) for m in members))
            elif known is not None:
                choices = tuple(c for c in known if not any(_same(c, m) for m in members))
            else:
                return
        else:
            return
        if choices is None:
            return
        scope.bindings[_choices_key(name)] = Choices(choices)
        if len(choices) == 1:
            scope.bindings[name] = choices[0]

    def _assign(self, node: ast.Assign | ast.AnnAssign, scope: Scope) -> None:
        value = self.expr(node.value, scope) if node.value is not None else OPAQUE  # expr() of None is OPAQUE too
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for bound in _bound_names(target):
                scope.bindings.pop(_choices_key(bound), None)  # a new value: what guards narrowed no longer holds
            if isinstance(target, ast.Name):
                scope.bindings[target.id] = value
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                key = _stored_key(target.value.id)
                scope.bindings[key] = Stored(_stored(scope.bindings.get(key)) + (value,))
                if isinstance(scope.bindings.get(target.value.id), Keywords):  # `d["USE_GDC"] = pdl`: a key added
                    scope.bindings[target.value.id] = OPAQUE
            elif isinstance(target, (ast.Tuple, ast.List)):
                for index, element in enumerate(target.elts):
                    if isinstance(element, ast.Name):
                        try:
                            scope.bindings[element.id] = value[index] if not isinstance(value, _Marker) else value
                        except Exception:
                            scope.bindings[element.id] = OPAQUE

    def _augmented_assign(self, node: ast.AugAssign, scope: Scope) -> None:
        """`n += 1` / `args += [...]` in a branch changes what the function returns (its value is not the one bound
        before): the new value is computed, or a stored `name[...]` becomes undecided."""
        target = node.target
        if isinstance(target, ast.Name):
            scope.bindings.pop(_choices_key(target.id), None)
            combined = ast.BinOp(left=ast.Name(id=target.id, ctx=ast.Load()), op=node.op, right=node.value)
            scope.bindings[target.id] = self._binop(combined, scope)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = _stored_key(target.value.id)
            scope.bindings[key] = Stored(_stored(scope.bindings.get(key)) + (OPAQUE,))

    def _mutating_call(self, node: ast.expr, scope: Scope) -> None:
        """`args.append(...)` / `options.update(...)` on a local list or dict: its value is no longer the literal it
        was bound to (an empty list filled only off NVIDIA is not empty on the target)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return
        owner = node.func.value
        if isinstance(owner, ast.Name) and isinstance(scope.bindings.get(owner.id), (tuple, Keywords)):
            scope.bindings[owner.id] = OPAQUE


class Stored(tuple):
    """The values a function body stores into `name[...]` (bindings key `name[]`), on any path."""


class Choices(tuple):
    """The constants an undecided local may still hold after exiting guards narrowed it (bindings key `name|`)."""


def _choices_key(name: str) -> str:
    return f"{name}|"


def _choices(value: Any) -> tuple | None:
    return tuple(value) if isinstance(value, Choices) else None


def _bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound_names(element)]
    return []


def _plain_constant(value: Any) -> bool:
    return type(value) in (bool, int, str, type(None))


def _members(value: Any) -> tuple | None:
    """The plain constants a container holds (a tuple literal, a module-level dict's keys), None when undecided."""
    if isinstance(value, Keywords):
        value = tuple(key for key, _ in value.items)
    if isinstance(value, tuple) and all(_plain_constant(v) for v in value):
        return value
    return None


def _may_catch(statement: ast.Try | ast.With) -> bool:
    """May an exception raised in the statement's body go on after it? Any `with` (its manager may suppress it),
    a `try` with a handler that does not simply raise again."""
    if isinstance(statement, ast.With):
        return True
    return any(not handler.body or not isinstance(handler.body[-1], ast.Raise) for handler in statement.handlers)


# SMI tools exist only on their vendor's machines; calls that run a command line
_VENDOR_TOOLS = {"nvidia-smi": "nvidia", "rocm-smi": "amd", "amd-smi": "amd"}
_RUNS_COMMAND = {"check_output", "check_call", "run", "call", "Popen", "system", "popen", "getoutput"}


def _stored_key(name: str) -> str:
    return f"{name}[]"


def _stored(value: Any) -> tuple:
    return tuple(value) if isinstance(value, Stored) else ()


def _undecided_inside(value: Any) -> Any:
    """A tuple holding a marker (`x in (PLATFORM, "hip")`) is itself undecided."""
    if isinstance(value, tuple):
        markers = [v for v in value if isinstance(v, _Marker)]
        if markers:
            return PLATFORM if PLATFORM in markers else OPAQUE
    return None


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _missing_command_handler(statement: ast.Try) -> ast.ExceptHandler | None:
    """The handler that runs where the probed tool is absent: the first bare one, or the first naming an error a
    missing or failing command raises (an `except ImportError:` before it does not catch FileNotFoundError)."""
    for handler in statement.handlers:
        if handler.type is None:
            return handler
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(last_name(name) in MISSING_COMMAND_ERRORS for name in names):
            return handler
    return None
