"""The project-level analysis: names resolved through the scanned tree, and which code runs on the target.

Built from every module's facts (porter.analyze.project_facts, cached per file) in the parent process,
after the per-file analysis; it costs dictionary work, not parsing. Two things come out of it:

- `aliases_for(path)`: imports that reach Triton, torch or another library through the project's own
  modules (`from pkg.triton_utils import tl, triton`), as the library names the rules know;
- `reach(path, line, column)`: "target" (the code runs on the target), "nvidia_only" (only an NVIDIA build,
  or another vendor's backend, runs it) or "unknown" (a platform test whose value the target's facts do not
  decide), with the reason. Code is NVIDIA-only when a platform test around it is false on the target (a
  ROCm check's else-branch, the rest of a block after `if is_hip(): return`, `x if IS_NVIDIA else y`, a kernel's
  `if flag:` where every launch leaves the constexpr False, a class whose `default_enable` is such a test),
  when it is a keyword option set from a value False on the target (`launch_pdl=use_pdl`), when it lies in
  another vendor's folder or platform class (`backend/_ascend`, vllm's CudaPlatform) or in a module that
  imports an NVIDIA-only library whenever it loads, or when every use of its function (or of its class, whose
  methods run where it is used) is NVIDIA-only (a package's API, re-exported by an `__init__`, stays unknown:
  users call it), or when it is a top-level import or assignment whose every read in its module is such code (and
  no other module imports it). `if TYPE_CHECKING:` never runs.
  "opt_in": a default run (environment switches unset, option parameters as the project's own calls pass them)
  leaves the Triton kernel holding it uncompiled; host code so guarded is "unknown" with the option named. A kernel's
  constexpr is compiled as the package's own code sets it, every option on the way left at its default otherwise, an
  API's included (a host branch on an API option stays the users' choice), through fields of settings records
  (`args.sample_method`: the field's default, what constructions pass, what the project stores in it) and launches
  that unpack `*args` (an argument named like the parameter binds it).
  "unreached": no entry point of the package reaches the code, on any GPU: a module no loaded module imports whose
  name or place keeps outside callers away (private, retired, in a folder without `__init__.py`), a superseded copy,
  a kernel nothing launches, a public name outside the API the package states that nothing uses.

Users state what inference misses, as mypy's always_true/always_false: `[tool.porter] nvidia_only = [...]`
(predicates true only on NVIDIA), `rocm_only = [...]`, `nvidia_only_paths = [globs]`.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from porter.analyze.index import as_triton, triton_distributions
from porter.analyze.project_eval import (
    NOT_FOUND,
    OPAQUE,
    PLATFORM,
    Evaluator,
    Fn,
    Instance,
    Keywords,
    KeywordsOf,
    PlatformRef,
    RecordType,
    Scope,
    by_name,
    merge,
    truth,
)
from porter.analyze.project_facts import POSITIONAL, SPREAD, TYPE_USE, module_name, named_positional_key
from porter.records import Reach as ReachKind

# Folders holding another accelerator's backend (or NVIDIA-only kernel families): never loaded on AMD.
VENDOR_FOLDERS = frozenset(
    {
        "_ascend",
        "ascend",
        "_kunlunxin",
        "kunlunxin",
        "_mthreads",
        "mthreads",
        "_metax",
        "metax",
        "_iluvatar",
        "iluvatar",
        "_cambricon",
        "cambricon",
        "_enflame",
        "enflame",
        "_sunrise",
        "_tsingmicro",
        "_aipu",
        "npu",
        "_npu",
        "xpu",
        "_xpu",
        "tpu",
        "_tpu",
        "hpu",
        "_hpu",
        "neuron",
        "mlu",
        "musa",
        "habana",
        "gaudi",
        "_nvidia",
        "nvidia",
        "hopper",
        "blackwell",
        "sm90",
        "sm100",
    }
)
# Libraries built only for NVIDIA GPUs, absent from ROCm environments: a module importing one of them
# unconditionally at top level cannot load on AMD (vllm's CuTe-DSL router, liger's cutedsl ops). Prefixes of
# the imported module's dotted name. Triton's own NVIDIA modules (gluon's nvidia dialect, extra.cuda) are not
# here: they import on ROCm, and what then fails is what the Triton rules report.
NVIDIA_ONLY_LIBRARIES = (
    "cutlass",
    "cuda.bindings",
    "cuda.cuda",
    "cuda.cudart",
    "cuda.nvrtc",
    "deep_gemm",
    "nvfuser",
    "nvfuser_direct",
    "quack",
    "tensorrt",
)
# Gluon's Hopper/Blackwell dialects (wgmma, TMA, tcgen05): the module imports on ROCm, but kernels written in them
# compile only for those NVIDIA architectures (lmdeploy's Hopper fp8 GEMM): everything the module launches is theirs.
NVIDIA_ONLY_DIALECTS = tuple(
    f"triton.experimental.gluon.{part}nvidia.{arch}" for part in ("language.", "") for arch in ("hopper", "blackwell")
)
# Module files for another device type (vllm's platforms/xpu.py, worker/tpu_model_runner.py; mlx: Apple's MLX).
VENDOR_FILE_PREFIXES = ("xpu", "tpu", "hpu", "npu", "neuron", "ascend", "mlu", "musa", "mlx")
_PLATFORM_OBJECT = ("current_platform", "platform", "_platform", "PLATFORM")
_NOT_TARGET_ENUMS = {"CUDA", "XPU", "TPU", "CPU", "HPU", "NEURON", "OOT", "NPU", "MPS", "UNSPECIFIED"}
# The same facts seen from an NVIDIA GPU (Project.amd_only asks whether code runs there): NVIDIA's folders load,
# AMD's do not (`ops/rocm/`, aphrodite's `mxfp8/rocm_native.py`), nor modules importing AMD-only libraries.
NVIDIA_FOLDERS = frozenset({"_nvidia", "nvidia", "hopper", "blackwell", "sm90", "sm100"})
# A folder or module named for one NVIDIA compute capability or architecture (chalk's `ops/arch/sm89/`, kt-kernel's
# `layout_details/hopper_value.py`): code chosen per NVIDIA arch, which ROCm's (9, 4) / (9, 5) do not pick. All ten
# labelled findings in such paths over the real-code splits were false.
NVIDIA_ARCH_NAME = re.compile(r"(sm_?\d{2,3}[a-z]?|hopper|blackwell)", re.IGNORECASE)
AMD_FOLDERS = frozenset({"rocm", "_rocm", "amd", "_amd", "hip", "_hip"})
AMD_FILE_PREFIXES = ("rocm", "hip", "amd")
AMD_ONLY_LIBRARIES = ("aiter",)
# words in a module's name that retire it: an unimported `sgd_legacy.py` is kept for reference, not for callers;
# a design proposal or draft (`*_fusedbwd_proposal.py`) is not yet for them
RETIRED_WORDS = frozenset({"legacy", "deprecated", "obsolete", "old", "proposal", "draft"})
_NOT_NVIDIA_ENUMS = (_NOT_TARGET_ENUMS - {"CUDA"}) | {"ROCM"}
TARGET: ReachKind = "target"
UNKNOWN: ReachKind = "unknown"
NVIDIA_ONLY: ReachKind = "nvidia_only"  # the code does not run on the target (named for the usual case)
ROCM_ONLY: ReachKind = "rocm_only"  # runs on the target but on no NVIDIA GPU: NVIDIA-tuning findings are dropped
OPT_IN_REACH: ReachKind = "opt_in"  # runs only where a user turns a default-off option on: dropped, shown on request
UNREACHED: ReachKind = "unreached"  # no entry point of the package reaches it, on any GPU: dropped, shown on request
_DEAD_KINDS = (NVIDIA_ONLY, UNREACHED)  # does not run on the target
_DROPPED_KINDS = (NVIDIA_ONLY, OPT_IN_REACH, UNREACHED)
# Where a project's own calls do not show how it runs by default: its tests, benchmarks and examples pass options
# (use_atomic=True) to exercise them. Path parts (folders) and module-name prefixes / suffixes.
OUTSIDE_FOLDERS = frozenset({"test", "tests", "testing", "benchmark", "benchmarks", "bench", "examples", "example"})
OUTSIDE_STEMS = re.compile(r"\A(test_|bench_|benchmark_)|_(test|tests|bench|benchmark)\Z|\A(test|tests|conftest)\Z")


@dataclass(frozen=True)
class ReachStatements:
    """What the user states (`[tool.porter]`): names true only on NVIDIA / only on ROCm, paths never loaded."""

    nvidia_only: tuple[str, ...] = ()
    rocm_only: tuple[str, ...] = ()
    nvidia_only_paths: tuple[str, ...] = ()

    def words(self) -> tuple[str, ...]:
        """The stated names' last parts: tests naming them are kept in the module facts."""
        return tuple(sorted({name.rsplit(".", 1)[-1] for name in (*self.nvidia_only, *self.rocm_only)}))

    def value_of(self, qualified: str, amd: bool = True) -> bool | None:
        """The stated value on an AMD target (`amd`), or on an NVIDIA one; None when nothing is stated."""
        tail = qualified.rsplit(".", 1)[-1]
        for names, value in ((self.nvidia_only, not amd), (self.rocm_only, amd)):
            if (
                qualified in names
                or ("." not in qualified and tail in names)
                or any("." not in n and n == tail for n in names)
            ):
                return value
        return None


@dataclass(frozen=True)
class Reach:
    reach: ReachKind  # target | unknown | nvidia_only
    reason: str = ""


ON_TARGET = Reach(TARGET)
OPT_IN = (
    "in a default run (environment switches unset, options as the project's own calls outside its tests pass "
    "them): only where a user opts in"
)

OPT_IN_API = (
    "in a default run where the package's API is called with its defaults (options, settings fields) and its own "
    "code sets none otherwise: only where a user opts in"
)


def _same_constant(value: Any, other: Any) -> bool:
    """Are two evaluated values the same plain constant (a call passing an option its default explicitly)?"""
    plain = (bool, int, str, type(None))
    return type(value) in plain and type(value) is type(other) and value == other


def _spread_keys(keywords: dict) -> list[str]:
    """The refs entries holding a call's `**mapping` sources, in order ("**", "**1", ...)."""
    keys = [SPREAD]
    while f"{SPREAD}{len(keys)}" in keywords:
        keys.append(f"{SPREAD}{len(keys)}")
    return keys


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    """Is the dotted module name one of the prefixes or inside one of them?"""
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


class Project:
    def __init__(
        self,
        facts: dict[str, dict],
        target,
        statements: ReachStatements | None = None,
        environment_unset: bool = False,
        compiling: bool = False,
        api_defaults: bool = False,
    ) -> None:
        self.facts = facts  # path -> facts
        self.target = target
        self.statements = statements or ReachStatements()
        self.path_of = {f["module"]: path for path, f in facts.items()}
        self.module_facts = {f["module"]: f for f in facts.values()}
        self._suffixes = _suffix_index(self.path_of)
        self.evaluator = Evaluator(self, target, environment_unset)
        self._values: dict[tuple, Any] = {}
        self._spans: dict[tuple[str, str, int], Any] = {}  # (facts list, path, index) -> its source's value
        self._functions: dict[tuple[str, str], Reach] = {}
        self._users: dict[tuple[str, str], list] | None = None
        self._api: set[tuple[str, str]] | None = None
        self._exporting: set[str] | None = None
        self._scope_lists: dict[str, list] = {}
        self._graph: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None
        self._amd = target.vendor == "amd"
        self._off_target = "NVIDIA-only" if self._amd else "AMD-only"
        self._nvidia: Project | None = None
        self._copies: dict[str, Reach | None] = {}  # path -> why it is a superseded copy, or None
        # path -> why its folder, name or imports keep the module off the target, or None: asked by every finding
        # and every call site in the module, the answer depends on the path and the module's facts alone
        self._by_path: dict[str, Reach | None] = {}
        self._loads: dict[str, Reach | None] = {}  # path -> why the module cannot load on the target, or None
        self._bindings: dict[tuple[str, int], Reach | None] = {}  # (path, binds index) -> dead verdict, or None
        self._binding_lines: dict[str, dict[int, int]] = {}  # path -> line -> index of the top-level binding on it
        self._deciding_scopes: dict[str, list[tuple[str, int, int, str, Any]]] = {}  # path -> _reach_scopes
        self._distributions: set[str] | None = None  # libraries the project imports as `triton`
        self._starred: set[str] | None = None  # modules some module imports with `from m import *`
        self._unloaded: dict[str, str] | None = None  # path -> why no module the package loads imports it
        self._imported: set[tuple[str, str]] | None = None  # (module, name) some module imports by name
        self._homes: dict[str, list[str]] | None = None
        self._by_default: Project | None = None  # the same code with the environment unset (opt-in switches off)
        # the default run: the environment unset, and option parameters as the project's own calls leave them
        self._default_run = environment_unset
        # the default run as a kernel is compiled in it (see _compiled_param); with api_defaults, the options of the
        # package's API (and its settings records' fields) at their defaults too (see _api_default_value)
        self._compiling = compiling
        self._api_defaults = api_defaults
        self._compiled: Project | None = None
        self._by_api_default: Project | None = None

    # ---- names ------------------------------------------------------------------------------
    def locate(self, qualified: str) -> tuple[str, list[str]] | None:
        """(module key, remaining parts) of a dotted name that names something in the project."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = self._suffixes.get(".".join(parts[:cut]))
            if module:
                return module, parts[cut:]
        return None

    def canonical(self, qualified: str, depth: int = 0) -> str:
        """What a project name is bound to, followed through re-exports (`pkg.triton_utils.tl` -> `triton.language`)."""
        found = self.locate(qualified) if depth < 8 else None
        if found is None or not found[1]:
            return qualified
        module, rest = found
        facts = self.module_facts[module]
        head, tail = rest[0], rest[1:]
        bound = facts["imports"].get(head)
        if bound is None:
            snippets = facts["defs"].get(head) or []
            if len(snippets) != 1 or not snippets[0].startswith(f"{head} = "):
                return qualified
            value = snippets[0][len(head) + 3 :]
            dotted = _dotted_text(value)
            if dotted is None:
                return qualified
            first, _, more = dotted.partition(".")
            bound = facts["imports"].get(first)
            if bound is None:
                return qualified
            bound = f"{bound}.{more}" if more else bound
        return self.canonical(".".join([bound, *tail]), depth + 1)

    def related_files(self, path: str) -> list[str]:
        """The project files cross-module value flow may read for `path`: those it imports, transitively,
        and those importing it directly (a helper's finding names the launches its callers make). Not
        the whole undirected import graph: in a real project that is every file, and no cache would hit."""
        imports, importers = self._import_graph()
        forward: set[str] = set()
        todo = [path]
        while todo:
            for dep in imports.get(todo.pop(), ()):
                if dep != path and dep not in forward:
                    forward.add(dep)
                    todo.append(dep)
        return sorted(forward | importers.get(path, set()))

    def _import_graph(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """Project module -> the project modules it imports, and the reverse; resolved once per scan."""
        if self._graph is None:
            imports: dict[str, set[str]] = {}
            importers: dict[str, set[str]] = {}
            for module_path, facts in self.facts.items():
                found = (self.locate(qualified) for qualified in facts.get("imported", ()))
                deps = {self.path_of[f[0]] for f in found if f and self.path_of.get(f[0])} - {module_path}
                imports[module_path] = deps
                for dep in deps:
                    importers.setdefault(dep, set()).add(module_path)
            self._graph = imports, importers
        return self._graph

    def aliases_for(self, path: str) -> dict[str, str]:
        """Imports of `path` that reach a library through the project's own modules: local -> library name."""
        facts = self.facts.get(path)
        if not facts:
            return {}
        out = {}
        for local, qualified in facts["imports"].items():
            if self.locate(qualified) is None:
                continue
            resolved = self.canonical(qualified)
            if resolved != qualified and self.locate(resolved) is None:
                out[local] = as_triton(resolved, self._triton_distributions()) or resolved
        return out

    def _triton_distributions(self) -> set[str]:
        """Libraries some module of the project imports as `triton` (tokenspeed's `tokenspeed_triton`): their names,
        re-exported by the project's own modules, are Triton's."""
        if self._distributions is None:
            imports = (binding for facts in self.module_facts.values() for binding in facts["imports"].items())
            self._distributions = triton_distributions(imports)
        return self._distributions

    # ---- the evaluator's resolver -----------------------------------------------------------
    def name(self, name: str, scope: Scope, evaluator: Evaluator) -> Any:
        stated = self.statements.value_of(name, self._amd) if "." not in name else None
        if stated is not None:
            return stated
        facts = self.module_facts.get(scope.module)
        if facts is None:
            return self._fallback(name)
        qualname = scope.qualname
        while qualname:
            sources = facts["locals"].get(qualname, {}).get(name)
            if sources is not None:
                return self._memo(
                    ("local", scope.module, qualname, name),
                    lambda q=qualname, found=sources: merge(
                        [evaluator.source(s, Scope(scope.module, q)) for s in found], False
                    ),
                )
            options = facts.get("options", {}).get(qualname, {}) if self._default_run else {}
            if name in options:  # a default run: the option as the project's own calls leave it
                return self._memo(
                    ("option", scope.module, qualname, name),
                    lambda q=qualname, declared=options: self._option(scope.module, q, name, declared[name]),
                )
            params = facts["params"].get(qualname, {})
            if name in params:
                return self._memo(
                    ("param", scope.module, qualname, name),
                    lambda q=qualname, declared=params: self._param(scope.module, q, name, declared[name]),
                )
            if self._compiling and name in facts.get("typed", {}).get(qualname, {}):
                return self._typed_param(scope.module, facts["typed"][qualname][name])
            if self._compiling and facts.get("kwargs", {}).get(qualname) == name:
                return KeywordsOf(scope.module, qualname)
            qualname = qualname.rpartition(".")[0]
        return self.module_value(scope.module, name)

    def module_value(self, module: str, name: str) -> Any:
        return self._memo(("module", module, name), lambda: self._module_value(module, name))

    def _module_value(self, module: str, name: str) -> Any:
        facts = self.module_facts.get(module)
        if facts is None:
            return self._fallback(name)
        record = facts.get("records", {}).get(name)
        if record is not None and len(facts["defs"].get(name, ())) == 0 and name not in facts["imports"]:
            fields, properties = record[:2]
            return RecordType(module, name, tuple(fields), tuple(sorted(properties.items())))
        values = []
        if name in facts["imports"]:
            imported = self.qualified(facts["imports"][name])
            values.append(imported if imported is not NOT_FOUND else self._fallback(name))
        for snippet in facts["defs"].get(name, ()):
            if not snippet:
                values.append(OPAQUE)
            elif snippet.startswith(f"{name} = "):
                values.append(self._literal_value(module, name, snippet[len(name) + 3 :]))
            else:
                values.append(Fn(module, name, snippet))
        if not values:
            source = self._star_source(facts, name)
            if source is not None:  # `from .utils import *`: the name is what utils binds it to
                return self.module_value(source, name)
            return self._fallback(name)
        value = merge(values, False)
        if value is OPAQUE:
            fallback = self._fallback(name)
            return fallback if fallback is not OPAQUE else value
        return value

    def _literal_value(self, module: str, name: str, source: str) -> Any:
        """A module-level binding's value; undecided for a mutable container literal (`_MODES = {"tree": ...}`)
        that its module changes in place (`def register(n, f): _MODES[n] = f`) or another module may (it imports
        the name, or the module and reads the name on it): its keys and members are not only those it shows."""
        value = self.evaluator.source(source, Scope(module, ""))
        if not isinstance(value, (Keywords, tuple)) or not _mutable_literal(source):
            return value
        facts = self.module_facts[module]
        path = self.path_of.get(module)
        shared = (module, name) in self._imported_names() or any(use[0] != path for use in self.users(module, name))
        return OPAQUE if shared or name in facts.get("filled", ()) else value

    def empty_dict_at_module_level(self, module: str, name: str) -> bool:
        """Is `name` bound once in `module`, to `{}` (a cache the module's functions fill)?"""
        facts = self.module_facts.get(module)
        return facts is not None and name not in facts["imports"] and facts["defs"].get(name) == [f"{name} = {{}}"]

    def _star_source(self, facts: dict, name: str, depth: int = 0) -> str | None:
        """The project module a `from m import *` of this module takes `name` from (through further star
        imports), honouring `__all__` and, without one, the rule that `_private` names are not exported."""
        if depth > 8:
            return None
        for star in facts.get("stars", ()):
            found = self.locate(star)
            if found is None or found[1]:
                continue
            source = self.module_facts.get(found[0])
            if source is None:
                continue
            exports = source.get("exports")
            if exports is not None and name not in exports or exports is None and name.startswith("_"):
                continue
            if name in source["imports"] or name in source["defs"]:
                return found[0]
            deeper = self._star_source(source, name, depth + 1)
            if deeper is not None:
                return deeper
        return None

    def dotted(self, dotted: str, scope: Scope, evaluator: Evaluator) -> Any:
        """A dotted name whose head is an import (or unbound): a known API, a project name, or NOT_FOUND."""
        head, _, rest = dotted.partition(".")
        facts = self.module_facts.get(scope.module)
        if head in scope.bindings:
            return NOT_FOUND
        if facts is not None:
            if head in facts["defs"] or any(head in facts["locals"].get(q, {}) for q in _chain(scope.qualname)):
                return NOT_FOUND
            bound = facts["imports"].get(head)
            if bound is not None:
                return self.qualified(f"{bound}.{rest}" if rest else bound)
        # an unbound head (`x.is_cuda` on a tensor, `self.flag`): only a known API by its full name
        return self.evaluator.known[dotted] if dotted in self.evaluator.known else NOT_FOUND

    def qualified(self, qualified: str, project: bool = True) -> Any:
        """The value of a fully qualified name (NOT_FOUND when nothing is known of it)."""
        stated = self.statements.value_of(qualified, self._amd)
        if stated is not None:
            return stated
        if qualified in self.evaluator.known:
            return self.evaluator.known[qualified]
        found = self.locate(qualified) if project else None
        if found is not None and found[1]:
            module, rest = found
            value = self.module_value(module, rest[0])
            for attr in rest[1:]:
                value = self.evaluator.attribute_of(value, attr)
            return value
        tail = qualified.rsplit(".", 1)[-1]
        fallback = self._fallback(tail)
        return fallback if fallback is not OPAQUE else NOT_FOUND

    def _fallback(self, name: str) -> Any:
        if name in _PLATFORM_OBJECT:
            return PlatformRef()
        value = by_name(name, self.target)
        return OPAQUE if value is None else value

    def call(self, fn: Fn, evaluator: Evaluator) -> Any:
        """A project function's return value; one its body does not decide is read by its name (`is_cuda`)."""

        def run() -> Any:
            value = evaluator.run_function(fn, {})
            if value is OPAQUE:
                named = by_name(fn.qualname.rsplit(".", 1)[-1], self.target)
                return named if named is not None else value
            return value

        return self._memo(("call", fn.module, fn.qualname), run)

    def local_import(self, statement: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        facts = self.module_facts.get(scope.module, {})
        for alias in statement.names:
            local = alias.asname or alias.name.split(".", 1)[0]
            if isinstance(statement, ast.ImportFrom):
                base = _absolute(statement.module or "", statement.level, facts)
                value = self.qualified(f"{base}.{alias.name}") if base is not None else NOT_FOUND
            else:
                value = NOT_FOUND
            if value is not NOT_FOUND:  # unresolved: leave the name to the module's imports
                scope.bindings[local] = value

    def _memo(self, key: tuple, compute) -> Any:
        if key in self._values:
            return self._values[key]
        self._values[key] = OPAQUE  # a cycle reads as runtime data
        value = compute()
        self._values[key] = value
        return value

    def _param(self, module: str, qualname: str, name: str, param: list) -> Any:
        """A kernel/helper parameter: the value every call site passes (constexpr flags fed from predicates).
        Unknown callers (methods, no call site in the project, a call passing it positionally) give OPAQUE.
        A public function's callers outside the project may leave a parameter to its default or pass anything:
        its default is no evidence (flag_gems's `fused_experts(..., use_int4_w4a16=False)` is API), so only what
        every project call passes by name decides it (lmdeploy's `use_pdl=use_pdl`, computed from is_cuda())."""
        tuned = self.module_facts[module].get("tuned", {}).get(qualname, {})
        if name in tuned:  # every config of the kernel's autotune list sets it to this value
            return self.evaluator.source(tuned[name], Scope(module, ""))
        default, position, constexpr = (*param, False)[:3]
        if len(param) > 3:
            return self._platform_default(module, qualname, name, param)
        if constexpr and self._default_run and not self._compiling:
            return self._compiled_param(module, qualname, name, param)
        users = self.users(module, qualname) if "." not in qualname else []
        if not users:
            return OPAQUE
        closed = constexpr or qualname.startswith("_")  # a kernel's launches, a private helper's calls: all known
        default_value = self.evaluator.source(default, Scope(module, "")) if default and closed else OPAQUE
        return self._passed_at_calls(users, name, position, default_value)

    def _option(self, module: str, qualname: str, name: str, option: list) -> Any:
        """An option parameter in a default run: what every call of the function in the project passes, its tests,
        benchmarks and `__main__` self-tests left out (polarquant's `use_atomic=False` default, set True only by
        the module's own benchmark). A function no such call uses is an entry point for outside callers, who may
        pass anything: only a private parameter (`_owners=None`, for tests) then keeps its default. A package's API
        (re-exported by an `__init__`, or in `__all__`) is called by users who turn its options on (flashlib's
        `fused=False` fallback, flag_gems's `use_int4_w4a16=True`): undecided, unless the package shows the option
        to be a test variant: its own code calls the function, and only its tests, benchmarks or self-tests pass
        the option (polarquant's exported `polar_gemv_splitk`, called by `polar_matmul` with `use_atomic` left
        False, set True only by the module's `__main__` benchmark). A method's callers are not indexed."""
        default, position = option
        if "." in qualname:
            return OPAQUE
        every = self.users(module, qualname)
        users = [user for user in every if not self.outside_use(user[0], user[1])]
        default_value = self.evaluator.source(default, Scope(module, ""))
        api = (module, qualname) in self._package_api() or qualname in (self.module_facts[module]["exports"] or ())
        if self._api_defaults:  # an entry point's option keeps its default (see _api_default_value)
            return self._passed_at_calls(users, name, position, default_value) if users else default_value
        if api and not (users and self._set_only_outside(every, name, position, default_value)):
            return OPAQUE  # an API's option (`fused=True`, `use_int4_w4a16=False`): a feature its users turn on
        if not users:
            return default_value if name.startswith("_") else OPAQUE
        return self._passed_at_calls(users, name, position, default_value)

    def _typed_param(self, module: str, annotation: str) -> Any:
        """A parameter annotated with a record type, in a default run: some object of that type (see field_value)."""
        kind = self.module_value(module, annotation)
        return Instance(kind) if isinstance(kind, RecordType) else OPAQUE

    def field_value(self, kind: RecordType, field: str) -> Any:
        """What a field of any object of a record type holds in a default run: its default, what every construction
        in the project outside its tests passes for it, and what the record's own methods store in it (hip-attn's
        `logit_softcap`, set to None in `__post_init__`). Undecided where the project stores it in some object
        (`args.sample_method = x`, `replace(args, sample_method=x)`), where a construction passes runtime data or
        unpacks `*args`, or where it has no default. Undecided too where the project uses the class otherwise than
        by constructing it or naming its type (`Args.parse(text)` building one with `cls(**...)`, `partial(Args,
        f=x)`, an alias, a subclass storing `self.f`), and where it has base classes (fields and stores it
        inherits)."""
        return self._memo(("field", kind.module, kind.name, field), lambda: self._field_value(kind, field))

    def _field_value(self, kind: RecordType, field: str) -> Any:
        if any(field in facts.get("fields", ()) for facts in self.facts.values()):
            return OPAQUE
        if not self._api_defaults and self._api_name(kind.module, kind.name):
            return OPAQUE  # its users construct it with any field
        record = self.module_facts[kind.module]["records"][kind.name]
        defaults, stores, bases = (*record[2:], {}, {}, False)[:3]
        users = [user for user in self.users(kind.module, kind.name) if not self.outside_use(user[0], user[1])]
        if bases or any(POSITIONAL not in keywords and TYPE_USE not in keywords for *_, keywords in users):
            return OPAQUE
        scope = Scope(kind.module, "")
        default = self.evaluator.source(defaults[field], scope) if field in defaults else OPAQUE
        values = [default]
        values += [
            self.evaluator.source(s, Scope(kind.module, kind.name)) if s else OPAQUE for s in stores.get(field, ())
        ]
        position = kind.fields.index(field)
        constructions = [user for user in users if POSITIONAL in user[3]]  # the others only name the type
        if constructions:
            values.append(self._passed_at_calls(constructions, field, position, default))
        return merge(values, False)

    def _compiled_param(self, module: str, qualname: str, name: str, param: list) -> Any:
        """A kernel's constexpr parameter in a default run, as its launches pass it: through fields of settings
        records (field_value) and launches that unpack `*args` (_passed), which only a kernel's value follows."""
        if self._compiled is None:
            self._compiled = Project(
                self.facts,
                self.target,
                self.statements,
                environment_unset=True,
                compiling=True,
                api_defaults=self._api_defaults,
            )
        return self._compiled._param(module, qualname, name, param)

    def _api_default_value(self, path: str, index: int) -> Any:
        """A region's test in a default run where the package's API is called with its defaults too: its options,
        the `**kwargs` of its entry points and the fields of the settings records it exports are what the package's
        own code passes, or their defaults. Asked only for a kernel's optional step (_optional_step): COAT's
        STOCHASTIC rounding (every `stochastic=False`), hip-attn's LOGIT_SOFTCAP (the v1.1 args field defaults to
        None, no code of the package sets it), whose findings were labelled false. An alternative an option selects
        stays the users' choice, as a host branch does (_option): flashlib's `fused=False` two-pass kernels, labelled
        true; the accurate libdevice tanh of `fast=False`, the switch a port flips where the fast PTX path fails."""
        if self._by_api_default is None:
            self._by_api_default = Project(
                self.facts, self.target, self.statements, environment_unset=True, api_defaults=True
            )
        return self._by_api_default._span_value("regions", path, index)

    def _optional_step(self, facts: dict, index: int) -> bool:
        """Is the region the body of an `if` without an alternative (no else / elif) in a Triton kernel or device
        function: a step an option adds, not one of the implementations it chooses between? A body that returns or
        replaces a value the kernel computed before the `if` is the other implementation (facts' `replacing`)."""
        l1, c1, _l2, _c2, scope, test, wanted = facts["regions"][index]
        if not wanted or scope.split(".")[0] not in facts.get("kernels", ()):
            return False
        if [l1, c1] in facts.get("replacing", ()):
            return False  # `x = slow(a)` then `if FAST: x = fast(a)`, or `if FAST: return ...`: an alternative
        return not any(r[4] == scope and r[5] == test and not r[6] and r[0] >= l1 for r in facts["regions"])

    def _set_only_outside(self, users: list, name: str, position: int, default_value: Any) -> bool:
        """Do the calls that pass parameter `name` (by name or at `position`) something other than its default all
        lie in the project's tests, benchmarks or self-tests, and is there at least one? An API option the package
        exercises only there is a variant it measures, not one its own code takes; flashlib's `fused=False`, which
        no call passes, stays the users' documented choice."""
        setting = []
        for path, line, _column, keywords in users:
            passed = self._passed(keywords, name, position)
            if passed is not None and not _same_constant(self._at_call(passed, path, line), default_value):
                setting.append((path, line))
        return bool(setting) and all(self.outside_use(path, line) for path, line in setting)

    def _passed_at_calls(self, users: list, name: str, position: int, default_value: Any) -> Any:
        """What the calls `users` pass for parameter `name` (at `position`), merged: a call that leaves it out
        passes `default_value`."""
        values = []
        for path, line, _column, keywords in users:
            passed = self._passed(keywords, name, position)
            if passed is not None:
                values.append(self._at_call(passed, path, line))
            elif SPREAD in keywords:
                values.append(self._spread_value(keywords, name, position, default_value, path, line))
            elif POSITIONAL in keywords and 0 <= keywords[POSITIONAL] <= position:
                values.append(default_value)  # the call leaves it to its default
            else:
                values.append(OPAQUE)  # passed positionally as runtime data, through *args, or not a call at all
        return merge(values, False)

    def outside_use(self, path: str, line: int) -> bool:
        """Is a use of a function in the project's tests, benchmarks or examples, or in a module's `__main__`
        self-test: a caller exercising options, not the project's own default path?"""
        parts = path.replace("\\", "/").split("/")
        if any(part.lower() in OUTSIDE_FOLDERS for part in parts[:-1]):
            return True
        if OUTSIDE_STEMS.search(parts[-1].rsplit(".", 1)[0].lower()):
            return True
        return any(l1 <= line <= l2 for l1, l2 in self.facts.get(path, {}).get("main", ()))

    def _spread_value(self, keywords: dict, name: str, position: int, default: Any, path: str, line: int) -> Any:
        """What a call's `**mapping`s pass for a parameter: the launch keywords a helper returns per platform
        (grouped-nf4-gemm's `**_pdl_kw(dev, rows)` gives `{}` on ROCm, leaving `PDL` to its False default). A mapping
        holding the name passes it (Python refuses a second value); when every mapping is known and none holds it,
        the parameter keeps its default unless the call's positional arguments may reach it."""
        mappings = [self._at_call(keywords[k], path, line) for k in _spread_keys(keywords)]
        mappings = [self._keywords_passed(m, name) if isinstance(m, KeywordsOf) else m for m in mappings]
        for mapping in mappings:
            if isinstance(mapping, Keywords) and name in dict(mapping.items):
                return mapping.value(name, default)
        if not all(isinstance(m, Keywords) for m in mappings):
            return OPAQUE
        return default if 0 <= keywords.get(POSITIONAL, 0) <= position else OPAQUE

    def _keywords_passed(self, spread: KeywordsOf, name: str) -> Any:
        """A function's `**kwargs` in a default run, as far as keyword `name` goes: what the project's calls of it
        outside its tests pass by that name (an entry point's users pass none); undecided where a call spreads a
        mapping of its own into it, or where the project refers to the function without calling it. Only asked for a
        `**` parameter the function never changes (the facts leave out one it changes before spreading it)."""
        values = []
        users = [user for user in self.users(spread.module, spread.qualname) if not self.outside_use(user[0], user[1])]
        if not self._api_defaults and (not users or self._api_name(spread.module, spread.qualname)):
            return OPAQUE  # an entry point: its callers pass anything
        if any(POSITIONAL not in keywords for *_, keywords in users):
            return OPAQUE  # a reference that is no call (a dispatch table, a partial): an unknown caller
        for path, line, _column, keywords in users:
            if SPREAD in keywords:
                return OPAQUE
            if name in keywords:
                values.append(self._at_call(keywords[name], path, line))
        return Keywords(((name, merge(values, False)),)) if values else Keywords(())

    def _api_name(self, module: str, name: str) -> bool:
        """Is the module-level name part of its package's API (re-exported by an `__init__`, or in `__all__`)?"""
        return (module, name) in self._package_api() or name in (self.module_facts[module]["exports"] or ())

    def _at_call(self, source: str, path: str, line: int) -> Any:
        """The value of `source` (an argument a call passes) in the scope of the call at `path`:`line`."""
        return self.evaluator.source(source, Scope(self.module_facts_at(path)["module"], self.scope_at(path, line)))

    def _passed(self, keywords: dict, name: str, position: int) -> str | None:
        """The source a call passes for a parameter: by name, or positionally where the facts kept it (a name, a
        constant, a platform test); None when the call leaves it to its default or passes runtime data. In a
        default run a call unpacking `*args` passes it by an argument named like it (`args.sample_method` for
        SAMPLE_METHOD), as the launches of kernels with dozens of parameters spell them."""
        if name in keywords:
            return keywords[name]
        count = keywords.get(POSITIONAL, 0)
        if count == -1 and self._compiling:
            return keywords.get(named_positional_key(name))
        return keywords.get(f"{POSITIONAL}{position}") if 0 <= position < count else None

    def _platform_default(self, module: str, qualname: str, name: str, param: list) -> Any:
        """A `None` parameter the function replaces with a platform-decided value (fbgemm's `no_use_persistent`):
        outside callers may pass anything, but the package's own default path is what runs on the target, so the
        value is that replacement merged with what each project call passes by name. A call passing it
        positionally, or passing a parameter whose earlier branch may set it instead, leaves it undecided."""
        default, position, _constexpr, overrides = param
        values = [self.evaluator.source(default, Scope(module, qualname))]
        users = self.users(module, qualname) if "." not in qualname else []
        for path, line, _column, keywords in users:
            if any(o in keywords for o in overrides) or keywords.get(POSITIONAL, 0) == -1 or SPREAD in keywords:
                values.append(OPAQUE)
            elif self._passed(keywords, name, position) is not None:
                values.append(self._at_call(self._passed(keywords, name, position) or "", path, line))
            elif POSITIONAL in keywords and keywords[POSITIONAL] > position:
                values.append(OPAQUE)  # passed positionally as runtime data
        return merge(values, False)

    # ---- call sites -------------------------------------------------------------------------
    def module_facts_at(self, path: str) -> dict:
        return self.facts[path]

    def users(self, module: str, function: str) -> list:
        """(path, line, column, keywords) of every use of the module-level `function` in the project."""
        if self._users is None:
            self._users = self._index_users()
        return self._users.get((module, function), [])

    def _index_users(self) -> dict[tuple[str, str], list]:
        users: dict[tuple[str, str], list] = {}
        for path, facts in self.facts.items():
            for key, refs in facts["refs"].items():
                head, _, attr = key.partition(".")
                if head in facts["imports"]:
                    qualified = facts["imports"][head] + (f".{attr}" if attr else "")
                else:
                    qualified = f"{facts['module']}.{key}"
                found = self.locate(qualified)
                if found is None or not found[1] or len(found[1]) > 1 + self._is_class(found[0], found[1][0]):
                    continue  # a module, or an attribute of something other than a class (`Fn.apply` uses `Fn`)
                owner = (found[0], found[1][0])
                span = self.module_facts[found[0]]["scopes"].get(owner[1]) if found[0] == facts["module"] else None
                if span is not None and span[2] == "class":
                    span = None  # `return Args(...)` in a method of Args: a construction, no recursion
                member = len(found[1]) > 1  # `Args.parse(text)`: a use of the class, no call of it
                for line, column, keywords in refs:
                    if span is not None and span[0] <= line <= span[1]:
                        continue  # recursion: a use inside the function itself
                    users.setdefault(owner, []).append((path, line, column, {} if member else keywords))
        self._index_op_users(users)
        return users

    def _is_class(self, module: str, name: str) -> bool:
        return self.module_facts[module]["scopes"].get(name, (0, 0, ""))[2] == "class"

    def _index_op_users(self, users: dict[tuple[str, str], list]) -> None:
        """`torch.ops.ns.name(...)` uses the function registered as that custom op (fairchem's `@triton_op`
        launchers, called only through torch.ops). The arguments are not read: no parameter is decided by them."""
        registered = {
            op: (f["module"], function) for f in self.facts.values() for op, function in f.get("ops", {}).items()
        }
        if not registered:
            return
        for path, facts in self.facts.items():
            for line, column, op in facts.get("op_uses", ()):
                if op in registered:
                    users.setdefault(registered[op], []).append((path, line, column, {}))

    def _package_api(self) -> set[tuple[str, str]]:
        """(module, name) of what package `__init__` modules re-export by name (`from .softplus import softplus`,
        not used there, or named in its `__all__`): the API users call. A star import re-exports everything, so
        it names no API; an import the `__init__` uses itself (a backend registering its kernels) is no API."""
        if self._api is None:
            api: set[tuple[str, str]] = set()
            for facts in self.facts.values():
                if not facts["package"]:
                    continue
                exports = facts["exports"] or ()
                for local, qualified in facts["imports"].items():
                    if local in facts["refs"] and local not in exports:
                        continue
                    found = self.locate(qualified)
                    if found is not None and len(found[1]) == 1:
                        api.add((found[0], found[1][0]))
            self._api = api
        return self._api

    def _api_modules(self) -> set[str]:
        """The modules whose names a package `__init__` re-exports."""
        if self._exporting is None:
            self._exporting = {module for module, _name in self._package_api()}
        return self._exporting

    def scope_at(self, path: str, line: int) -> str:
        scopes = self._scope_lists.get(path)
        if scopes is None:
            facts = self.facts[path]
            scopes = sorted((v[0], v[1], k) for k, v in facts["scopes"].items() if v[2] == "def")
            self._scope_lists[path] = scopes
        found = ""
        for start, end, qualname in scopes:
            if start > line:
                break
            if start <= line <= end:
                found = qualname
        return found

    # ---- predicates called at a refusal ------------------------------------------------------
    def refusing_predicate(self, path: str, line: int, predicate: str, alternatives: list[str]) -> str | None:
        """Why the assert / raise at `line` refuses the target (`predicate` is False there and no other
        alternative of the test admits it), or None where the project does not decide that (fail closed)."""
        facts = self.facts.get(path)
        if facts is None:
            return None
        scope = Scope(facts["module"], self.scope_at(path, line))
        if truth(self._call_with_literals(predicate, scope)) is not False:
            return None
        for alternative in alternatives:
            value = truth(self.evaluator.source(alternative, scope))
            if value is True or value is PLATFORM:
                return None
        return f"`{predicate}` is False on {self.target.name}"

    def _call_with_literals(self, text: str, scope: Scope) -> Any:
        """A helper called with literal arguments, run with them bound to its parameters
        (`has_cuda_capability(8, 9)` compares the capability with (8, 9), not with its call sites' union)."""
        try:
            call = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            return OPAQUE
        if not isinstance(call, ast.Call):
            return OPAQUE
        function = self.evaluator.expr(call.func, scope)
        if not isinstance(function, Fn) or not call.args:
            return self.evaluator.expr(call, scope)
        try:
            definition = ast.parse(textwrap.dedent(function.source)).body[0]
            values = [ast.literal_eval(arg) for arg in call.args]
        except (SyntaxError, ValueError, IndexError):
            return OPAQUE
        if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return OPAQUE
        names = [a.arg for a in [*definition.args.posonlyargs, *definition.args.args]]
        if len(values) > len(names):
            return OPAQUE
        return self.evaluator.run_function(function, dict(zip(names, values, strict=False)))

    # ---- reachability ----------------------------------------------------------------------
    def reach(self, path: str, line: int, column: int) -> Reach:
        """Does the code at (line, 1-based column) of `path` run on the target? Code that runs only where a user
        turns a default-off option on is dropped as opt-in inside a Triton kernel (a default run never compiles
        it: fairchem's ablation kernel, polarquant's atomic split-K variant) and marked unknown in host code, which
        fails at once for every user who turns the option on (cut-cross-entropy's CCE_AUTOTUNE perf model calls
        nvidia-smi): on the labelled corpus the first were false, the second true."""
        verdict = self._reach(path, line, column)
        if verdict.reach == OPT_IN_REACH and not self._in_kernel(path, line):
            return Reach(UNKNOWN, verdict.reason)
        return verdict

    def reach_of_uses(self, path: str, line: int, column: int, uses: list) -> Reach:
        """The reach of a finding about the names an import binds, which fail only where they are used (extra.cuda's
        libdevice loads on the HIP build; a kernel calling `__nv_` functions fails to compile): the import's own
        where that drops it, else dropped where every use is (NVIDIA-only or unreached where each is; opt-in
        where one is opt-in and the rest dropped), else the import's. freetoken's gdc helpers are called only
        under a PDL constexpr False on ROCm; COAT's libdevice.signbit only under a STOCHASTIC no default run sets."""
        own = self.reach(path, line, column)
        if own.reach in _DROPPED_KINDS or not uses:
            return own
        facts = self.facts.get(path) or {}
        names = self._names_bound_at(path, facts, line)
        if names is None or self._visible_outside(facts, names):
            return own  # another module may take the names and use them where they run
        verdicts = [(self.reach(path, at, col), at) for at, col in uses]
        if not all(verdict.reach in _DROPPED_KINDS for verdict, _ in verdicts):
            return own
        dead = all(verdict.reach in _DEAD_KINDS for verdict, _ in verdicts)
        first, at = verdicts[0] if dead else next((v, a) for v, a in verdicts if v.reach == OPT_IN_REACH)
        return Reach(first.reach, f"every use of the names it binds is dropped (line {at}: {first.reason})")

    def _in_kernel(self, path: str, line: int) -> bool:
        """Does the line lie in a Triton kernel or device function (module level, `@triton.jit` and the like)?"""
        facts = self.facts.get(path) or {}
        scopes = facts.get("scopes", {})
        return any(scopes[k][0] <= line <= scopes[k][1] for k in facts.get("kernels", ()) if k in scopes)

    def _reach(self, path: str, line: int, column: int) -> Reach:
        by_path = self._path_reach(path) or self._superseded(path)
        if by_path is not None:
            return by_path
        facts = self.facts.get(path)
        if facts is None:
            return ON_TARGET
        point = (line, column - 1)
        dead = self._needs_verdict(facts, point)
        if dead is not None:
            return dead
        dead, unknown, opt_in = self._region_verdicts(path, facts, point)
        if dead is not None:
            return dead
        dead, switched = self._switch_verdicts(path, facts, point)
        if dead is not None:
            return dead
        opt_in = opt_in or switched  # off in a default run: dropped unless the code is NVIDIA-only anyway
        bound = self._binding_reach(path, facts, line)
        if bound is not None:
            return bound
        dead, scope_unknown, scope_opt_in = self._scope_verdicts(path, facts, line)
        if dead is not None:
            return dead
        return opt_in or scope_opt_in or unknown or scope_unknown or ON_TARGET

    def _needs_verdict(self, facts: dict, point: tuple[int, int]) -> Reach | None:
        """NVIDIA-only when the code runs only after an import that fails on the target."""
        for l1, c1, l2, c2, module in facts.get("needs", ()):
            if not (self._amd and (l1, c1) <= point <= (l2, c2)):
                continue
            if _within(module, NVIDIA_ONLY_LIBRARIES):
                return Reach(
                    NVIDIA_ONLY,
                    f"runs only where `import {module}` succeeds (its ImportError handler "
                    f"exits before), which it cannot on {self.target.name}",
                )
            unloadable = self._unloadable(module)
            if unloadable is not None:
                return Reach(NVIDIA_ONLY, f"runs only after `import {module}`, which fails: {unloadable.reason}")
        return None

    def _region_verdicts(
        self, path: str, facts: dict, point: tuple[int, int]
    ) -> tuple[Reach | None, Reach | None, Reach | None]:
        """(dead, unknown, opt-in) from the branches around the point: the first test false on the target makes it
        dead; an undecided one unknown; one off in a default run (or an optional kernel step the API leaves off)
        opt-in."""
        unknown: Reach | None = None
        opt_in: Reach | None = None
        for index, region in enumerate(facts["regions"]):
            l1, c1, l2, c2, scope, test, wanted = region
            if not ((l1, c1) <= point <= (l2, c2)):
                continue
            value = truth(self._span_value("regions", path, index))
            if value is PLATFORM:
                unknown = unknown or Reach(
                    UNKNOWN, f"depends on `{test}`, which {self.target.name}'s facts do not decide"
                )
            elif value is not OPAQUE and value is not wanted:
                why = f"runs only when `{test}` is {wanted}; on {self.target.name} it is {value}"
                return Reach(NVIDIA_ONLY, why + _configured_note(facts, scope, test)), None, None
            elif value is OPAQUE and truth(self._default_value("regions", path, index)) is (not wanted):
                why = f"runs only when `{test}` is {wanted}, and it is {not wanted} {OPT_IN}"
                opt_in = opt_in or Reach(OPT_IN_REACH, why)
            elif (
                value is OPAQUE
                and self._optional_step(facts, index)
                and truth(self._api_default_value(path, index)) is (not wanted)
            ):
                why = f"a step of the kernel only `{test}` adds, and it is {not wanted} {OPT_IN_API}"
                opt_in = opt_in or Reach(OPT_IN_REACH, why)
        return None, unknown, opt_in

    def _switch_verdicts(self, path: str, facts: dict, point: tuple[int, int]) -> tuple[Reach | None, Reach | None]:
        """(dead, opt-in) from keyword options around the point set from a value False on the target (or in a
        default run)."""
        opt_in: Reach | None = None
        for index, (l1, c1, l2, c2, _scope, value_text) in enumerate(facts.get("switches", ())):
            if not (l1, c1) <= point <= (l2, c2):
                continue
            value = self._span_value("switches", path, index)
            # only False: None may be the very value a rule reports (`cuda_home=CUDA_HOME`), 0 is a count
            if value is False:
                why = f"the option is set from `{value_text}`, which is False on {self.target.name}"
                return Reach(NVIDIA_ONLY, why), None
            if value is OPAQUE and self._default_value("switches", path, index) is False:
                why = f"the option is set from `{value_text}`, which is False {OPT_IN}"
                opt_in = opt_in or Reach(OPT_IN_REACH, why)
        return None, opt_in

    def _scope_verdicts(self, path: str, facts: dict, line: int) -> tuple[Reach | None, Reach | None, Reach | None]:
        """(dead, unknown, opt-in) from the class or module-level function holding the line: a platform class of
        another vendor, or a function (or class, whose methods run where it is used) every use of which is dropped."""
        unknown: Reach | None = None
        opt_in: Reach | None = None
        for qualname, start, end, kind, enum in self._reach_scopes(path, facts):
            if not start <= line <= end:
                continue
            if kind == "class":
                verdict = _class_reach(qualname, enum) if self._amd else _class_reach_on_nvidia(qualname, enum)
                if verdict is not None:
                    return verdict, None, None
                if "." not in qualname:  # its methods run where the class is used (an autograd Function's apply)
                    verdict = self.function_reach(path, qualname)
                    if verdict.reach in _DEAD_KINDS:
                        return verdict, None, None
                    opt_in = opt_in or (verdict if verdict.reach == OPT_IN_REACH else None)
            elif "." not in qualname:
                verdict = self.function_reach(path, qualname)
                if verdict.reach in _DEAD_KINDS:
                    return verdict, None, None
                opt_in = opt_in or (verdict if verdict.reach == OPT_IN_REACH else None)
                unknown = unknown or (verdict if verdict.reach == UNKNOWN else None)
        return None, unknown, opt_in

    def _binding_reach(self, path: str, facts: dict, line: int) -> Reach | None:
        """A top-level import or assignment whose every read in its module is dead on the target, and which no other
        module imports, reads or gets through `__all__`: it binds a name nothing running uses (freetoken's
        `from triton.language.extra.cuda import gdc_wait, ...`, called only under `ENABLE_PDL`, False on ROCm;
        `FP8 = torch.float8_e4m3fn`, read only on the W8A8 route e4m3_native() keeps off ROCm). Library modules
        that cannot load on the target are judged by the module's imports, before this."""
        index = self._binding_at(path, facts, line)
        if index is None:
            return None
        key = (path, index)
        if key not in self._bindings:
            self._bindings[key] = None  # a read that leads back here: assume it runs
            _first, _last, names, uses = facts["binds"][index]
            self._bindings[key] = self._dead_binding(path, facts, names, uses)
        return self._bindings[key]

    def _dead_binding(self, path: str, facts: dict, names: list[str], uses: list) -> Reach | None:
        if self._visible_outside(facts, names):
            return None
        verdicts = [self._reach(path, use_line, column + 1) for use_line, column in uses]
        if not all(v.reach in _DEAD_KINDS for v in verdicts):
            return None
        first = next((i for i, v in enumerate(verdicts) if v.reach == NVIDIA_ONLY), 0)
        where = self._off_target if verdicts[first].reach == NVIDIA_ONLY else "in code nothing reaches"
        listed = ", ".join(f"`{name}`" for name in names)
        return Reach(
            verdicts[first].reach,
            f"every read of {listed} in the module is {where} (e.g. line {uses[first][0]}: {verdicts[first].reason})",
        )

    def _binding_at(self, path: str, facts: dict, line: int) -> int | None:
        """The index in facts["binds"] of the top-level binding on the line, None when none is recorded. Asked by
        every finding and call site of the module: its lines are indexed once."""
        lines = self._binding_lines.get(path)
        if lines is None:
            lines = self._binding_lines[path] = {
                at: index
                for index, (first, last, _n, _u) in enumerate(facts.get("binds", ()))
                for at in range(first, last + 1)
            }
        return lines.get(line)

    def _names_bound_at(self, path: str, facts: dict, line: int) -> list[str] | None:
        """The names of the top-level binding (import or assignment) on the line, None when none is recorded."""
        index = self._binding_at(path, facts, line)
        return facts["binds"][index][2] if index is not None else None

    def _visible_outside(self, facts: dict, names: list[str]) -> bool:
        """Can another module read one of the names a top-level statement binds: it imports or uses it, `__all__`
        lists it, or it takes it with `from module import *`?"""
        module = facts["module"]
        return any(
            name in (facts["exports"] or ())
            or (module, name) in self._imported_names()
            or self.users(module, name)
            or self._star_exported(module, facts, name)
            for name in names
        )

    def _star_exported(self, module: str, facts: dict, name: str) -> bool:
        """Does some module of the project `from module import *` a set of names holding `name` (the `__all__`
        list, else every public name)?"""
        if self._starred is None:
            self._starred = {star for other in self.module_facts.values() for star in other.get("stars", ())}
        exported = name in facts["exports"] if facts["exports"] is not None else not name.startswith("_")
        return exported and module in self._starred

    def _reach_scopes(self, path: str, facts: dict) -> list[tuple[str, int, int, str, Any]]:
        """(qualname, start, end, kind, enum) of the scopes whose reach decides the code in them, in the facts'
        order: classes and module-level functions (a method or nested function reaches through them). Kept per
        path: every finding and call site in the module asks, and a large module has thousands of methods."""
        if path not in self._deciding_scopes:
            self._deciding_scopes[path] = [
                (qualname, start, end, kind, enum)
                for qualname, (start, end, kind, enum) in facts["scopes"].items()
                if kind == "class" or "." not in qualname
            ]
        return self._deciding_scopes[path]

    def _path_reach(self, path: str) -> Reach | None:
        if path not in self._by_path:
            self._by_path[path] = self._path_verdict(path)
        return self._by_path[path]

    def _path_verdict(self, path: str) -> Reach | None:
        parts = path.replace("\\", "/").split("/")
        folders = VENDOR_FOLDERS if self._amd else (VENDOR_FOLDERS - NVIDIA_FOLDERS) | AMD_FOLDERS
        folder = next((p for p in parts[:-1] if p.lower() in folders), None)
        if folder is not None:
            return Reach(NVIDIA_ONLY, f"in another vendor's backend folder `{folder}/`")
        stem = parts[-1].rsplit(".", 1)[0].lower()
        if self._amd:
            arch = next((p for p in parts[:-1] if NVIDIA_ARCH_NAME.fullmatch(p)), None)
            if arch is not None or NVIDIA_ARCH_NAME.fullmatch(stem.split("_", 1)[0]):
                return Reach(NVIDIA_ONLY, f"named for an NVIDIA architecture (`{arch or parts[-1]}`)")
        prefixes = VENDOR_FILE_PREFIXES if self._amd else VENDOR_FILE_PREFIXES + AMD_FILE_PREFIXES
        if any(_named_for(stem, p) for p in prefixes):
            return Reach(NVIDIA_ONLY, f"a module for another device type (`{parts[-1]}`)")
        amd_sibling = self._amd and _named_for(stem, "nvidia") and self._amd_sibling(path, parts)
        if amd_sibling:
            return Reach(NVIDIA_ONLY, f"the NVIDIA module of a per-vendor layer; `{amd_sibling}` beside it serves AMD")
        if not self._amd:
            return self._import_reach_on_nvidia(path)
        for pattern in self.statements.nvidia_only_paths:
            if fnmatch.fnmatch(path, pattern):
                return Reach(NVIDIA_ONLY, f"matches nvidia_only_paths `{pattern}` in [tool.porter]")
        return self._import_reach(path)

    def _amd_sibling(self, nvidia: str, parts: list[str]) -> str | None:
        """The AMD module beside an NVIDIA one (zeus's gpu/nvidia.py and gpu/amd.py): a layer with one module per
        vendor, of which the platform loads its own. Without one, `nvidia.py` may be what every GPU runs; an AMD
        module that imports it (`class AMDGPU(NvidiaGPU)`) runs its code on AMD too."""
        folder = "/".join(parts[:-1])
        importers = self._import_graph()[1].get(nvidia, set())
        for path in self.facts:
            head, _, name = path.replace("\\", "/").rpartition("/")
            amd = any(_named_for(name.rsplit(".", 1)[0].lower(), p) for p in AMD_FILE_PREFIXES)
            if head == folder and amd and path not in importers:
                return name
        return None

    def _superseded(self, path: str) -> Reach | None:
        """A stale copy runs nowhere: a module nothing in the project imports, most of whose Triton kernels (two at
        least) another module, one the project imports, defines under the same names (hip-attn's draft variants of
        attention2_draft_prefetch.py), or modules of its folder the project imports define between them (a module
        split into several), or whose name tells outside callers not to import it. A module nothing
        imports is otherwise an entry point for outside callers."""
        if path not in self._copies:
            self._copies[path] = self._copy_verdict(path) or self._retired_verdict(path)
        return self._copies[path]

    def _retired_verdict(self, path: str) -> Reach | None:
        """A module no module the package loads imports, whose name or place keeps outside callers away too, runs
        nowhere (see _unloaded_modules)."""
        why = self._unloaded_modules().get(path)
        return Reach(UNREACHED, why + ", so it runs nowhere") if why is not None else None

    def _unloaded_modules(self) -> dict[str, str]:
        """path -> why no entry point of the package loads the module. Every module is an entry point for outside
        callers except those whose name or place keeps them away (see _closed_module); the package loads what its
        entry points import, transitively. A closed module that none of them reaches is unloaded (COAT's
        fake_quantization folder, whose one importer sits in the same folder; a private benchmark module)."""
        if self._unloaded is None:
            closed = {path: why for path in self.facts if (why := self._closed_module(path)) is not None}
            imports, importers = self._import_graph()
            loaded = [path for path in self.facts if path not in closed]
            seen = set(loaded)
            while loaded:
                for dep in imports.get(loaded.pop(), ()):
                    if dep not in seen:
                        seen.add(dep)
                        loaded.append(dep)
            self._unloaded = {}
            for path, why in closed.items():
                if path in seen:
                    continue
                by = sorted(importers.get(path, ()))
                nothing = (
                    f"only modules nothing loads import it ({by[0]})" if by else "nothing in the project imports it"
                )
                self._unloaded[path] = f"{why}; {nothing}"
        return self._unloaded

    def _closed_module(self, path: str) -> str | None:
        """What keeps outside callers from importing a module, or None for an entry point: a private name
        (`_memory_io.py`, a benchmark left beside the kernels), a folder without `__init__.py` inside a package (not
        part of the package setuptools finds: aphrodite's stale `deepseek_v4_ops/`), an import of pytest whenever it
        loads (a test or its oracle shipped in the package), or a name its authors retired or have not released
        (`sgd_legacy.py`, `*_deprecated.py`, `*_proposal.py`, the live version sitting beside it). Judged only where
        the package's `__init__` was scanned too: a scan of the file alone sees none of its importers. A module
        defining `main` may be a console script's entry point (`pkg._cli:main`), which runs with no import."""
        facts = self.facts.get(path) or {}
        parent, _, stem = facts.get("module", "").rpartition(".")
        if facts.get("package") or "main" in facts.get("defs", {}):
            return None
        if not self.module_facts.get(parent, {}).get("package"):
            folder = self._outside_package(parent)
            return f"a module of `{folder}/`, a folder without `__init__.py` inside a package" if folder else None
        if stem.startswith("_") and not stem.startswith("__"):
            return f"a private module (`{stem}`)"
        if any(_within(module, ("pytest",)) for module, _ in facts.get("requires", ())):
            # a library module cannot need the test runner to load: this is a test or its oracle, shipped along
            return f"a test module (`{stem}` imports pytest whenever it loads)"
        if RETIRED_WORDS & set(stem.lower().split("_")):
            return f"a retired or unreleased module (`{stem}`)"
        return None

    def _outside_package(self, folder: str) -> str | None:
        """The name of the folder without `__init__.py` holding the module `folder.x`, where a scanned package
        encloses it (`coat/activation/fake_quantization`) and the whole package was scanned; None where no scanned
        package does (a scripts folder beside the package) or the scan covers part of the package: a namespace
        folder is an ordinary part of some packages (freetoken's `kernel/triton/`), imported from modules such a
        scan does not see."""
        parts = folder.split(".")
        if not self._whole_package(folder):
            return None
        for cut in range(len(parts) - 1, 0, -1):
            if self.module_facts.get(".".join(parts[:cut]), {}).get("package"):
                return "/".join(parts)
        return None

    def _imported_names(self) -> set[tuple[str, str]]:
        """(module, name) of every project name some module imports by name (`from pkg.tools import run`): an
        import is a use, or a re-export (`pkg/api.py`) through which users call it."""
        if self._imported is None:
            self._imported = set()
            for facts in self.facts.values():
                for qualified in facts["imports"].values():
                    found = self.locate(qualified)
                    if found is not None and len(found[1]) == 1:
                        self._imported.add((found[0], found[1][0]))
        return self._imported

    def _whole_package(self, module: str) -> bool:
        """Was the top-level package of `module` scanned from its root (its `__init__` is in the scan)? Only then
        does "nothing in the project uses it" speak for the package: a scan of `pkg/kernels` alone misses the
        callers in `pkg/models` (torchao's public blockwise quantizers, used from modules outside such a scan)."""
        return bool(self.module_facts.get(module.split(".", 1)[0], {}).get("package"))

    def _copy_verdict(self, path: str) -> Reach | None:
        facts = self.facts.get(path) or {}
        kernels = set(facts.get("kernels", ()))
        importers = self._import_graph()[1]
        if len(kernels) < 2 or facts.get("package") or importers.get(path):
            return None
        shared: dict[str, set[str]] = {}  # imported module -> the kernels it defines under this module's names
        for kernel in kernels:
            for other in self._kernel_homes().get(kernel, ()):
                if other != path and importers.get(other):
                    shared.setdefault(other, set()).add(kernel)
        original, same = max(sorted(shared.items()), key=lambda item: len(item[1]), default=("", set()))
        if 2 * len(same) > len(kernels):
            return Reach(
                UNREACHED,
                f"a superseded copy: nothing in the project imports this module, and {len(same)} of its {len(kernels)} "
                f"Triton kernels are defined under the same names in {original}, which the project imports",
            )
        # a module split into several beside it (hip-attn's attention1_gpu.py, whose kernels moved to
        # attention1_block_gpu.py and the attention1_block_gpu_kernel/ folder)
        folder = path.rpartition("/")[0] + "/"
        split = {other: names for other, names in shared.items() if other.startswith(folder)}
        moved = set().union(*split.values()) if split else set()
        if 2 * len(moved) <= len(kernels):
            return None
        return Reach(
            UNREACHED,
            f"a superseded copy: nothing in the project imports this module, and {len(moved)} of its {len(kernels)} "
            f"Triton kernels are defined under the same names in {', '.join(sorted(split))} beside it, which the "
            "project imports",
        )

    def _kernel_homes(self) -> dict[str, list[str]]:
        """Triton kernel name -> the modules defining one by that name."""
        if self._homes is None:
            self._homes = {}
            for path, facts in self.facts.items():
                for kernel in facts.get("kernels", ()):
                    self._homes.setdefault(kernel, []).append(path)
        return self._homes

    def _import_reach(self, path: str) -> Reach | None:
        """NVIDIA-only when the module imports an NVIDIA-only library whenever it loads."""
        if path not in self._loads:
            self._loads[path] = self._import_verdict(path)
        return self._loads[path]

    def _import_verdict(self, path: str) -> Reach | None:
        facts = self.facts.get(path) or {}
        for line, branches in facts.get("branches", ()):
            if all(any(_within(m, NVIDIA_ONLY_LIBRARIES) for m in modules) for modules in branches):
                names = " or ".join(
                    f"`{next(m for m in modules if _within(m, NVIDIA_ONLY_LIBRARIES))}`" for modules in branches
                )
                return Reach(
                    NVIDIA_ONLY,
                    f"every branch of the if at line {line} imports an NVIDIA-only library ({names}): the module "
                    f"cannot load on {self.target.name}",
                )
        for module, line in facts.get("requires", ()):
            if _within(module, NVIDIA_ONLY_LIBRARIES):
                return Reach(
                    NVIDIA_ONLY,
                    f"the module imports `{module}` (line {line}) unconditionally: it "
                    f"cannot load on {self.target.name}",
                )
            if _within(module, NVIDIA_ONLY_DIALECTS):
                return Reach(
                    NVIDIA_ONLY,
                    f"the module's kernels are written in `{module}` (line {line}): they "
                    f"compile only for NVIDIA, never for {self.target.name}",
                )
        return None

    def _unloadable(self, qualified: str) -> Reach | None:
        """Why the project module defining `qualified` cannot load on the target (it imports an NVIDIA-only
        library whenever it loads), or None."""
        found = self.locate(qualified)
        return self._import_reach(self.path_of[found[0]]) if found is not None else None

    def _import_reach_on_nvidia(self, path: str) -> Reach | None:
        """Off an NVIDIA GPU when the module imports an AMD-only library (AITER) whenever it loads."""
        for module, line in (self.facts.get(path) or {}).get("requires", ()):
            if _within(module, AMD_ONLY_LIBRARIES):
                return Reach(NVIDIA_ONLY, f"the module imports `{module}` (line {line}), an AMD-only library")
        return None

    def may_convolve(self) -> bool:
        """Can a convolution run in this project: does a module name one or import a library of ready-made models?
        A scan of one module alone cannot tell where its model comes from, so it may."""
        return len(self.facts) < 2 or any(facts.get("convolves", True) for facts in self.facts.values())

    def amd_only(self, path: str, line: int, column: int) -> Reach | None:
        """Code written for AMD: the same analysis, run for an NVIDIA GPU of the target facts, finds that it does not
        run there (a ROCm guard around it, an arch test only AMD passes, a ROCm module, folder or platform class,
        or every use of its function is such code). None when it may run on NVIDIA too."""
        if not self._amd:
            return None
        if self._nvidia is None:
            self._nvidia = Project(self.facts, nvidia_reference(), self.statements)
        verdict = self._nvidia.reach(path, line, column)
        if verdict.reach != NVIDIA_ONLY:
            return None
        return Reach(ROCM_ONLY, f"written for AMD, it does not run on {self._nvidia.target.name}: {verdict.reason}")

    def _default_value(self, kind: str, path: str, index: int) -> Any:
        """The value of a span the target leaves undecided when no environment variable is set: an opt-in switch
        (fairchem's `SCT_CHUNK = int(os.environ.get("UMA_NITRO_SCT_CHUNK", "0"))`) is off. Only the environment
        differs between the two evaluations, so a decided value here comes from a variable's default."""
        if self._by_default is None:
            self._by_default = Project(self.facts, self.target, self.statements, environment_unset=True)
        return self._by_default._span_value(kind, path, index)

    def _span_value(self, kind: str, path: str, index: int) -> Any:
        """The value on the target of the source a span of the facts records, in its scope: a region's test
        (`regions`: the code runs when it is `wanted`) or a keyword's value (`switches`: False turns the option
        off). Both lists hold [l1, c1, l2, c2, scope, source, ...]."""
        key = (kind, path, index)
        if key not in self._spans:
            facts = self.facts[path]
            scope, source = facts[kind][index][4:6]
            self._spans[key] = self.evaluator.source(source, Scope(facts["module"], scope))
        return self._spans[key]

    def function_reach(self, path: str, function: str) -> Reach:
        """NVIDIA-only when every use of a module-level function in the project is (a package's API: unknown)."""
        facts = self.facts[path]
        key = (facts["module"], function)
        if key in self._functions:
            return self._functions[key]
        self._functions[key] = ON_TARGET  # recursion through call sites: assume it runs
        verdict = self._function_reach(path, facts, function)
        self._functions[key] = verdict
        return verdict

    def _unused_reach(self, path: str, facts: dict, function: str) -> Reach | None:
        """A Triton kernel that nothing in the project launches, or a device function nothing calls, runs nowhere
        (verl's unlaunched backward kernels, gemlite's PTX variant whose public name is bound to another one), when
        its module is one the project imports: a module nothing imports is for callers outside (triton's gsan
        testing helpers), and so is a package's API (re-exported by an `__init__`). A device function is dead only
        where its module calls Triton functions of its own (a variant not chosen): a library of device functions
        its module never uses (fla's softplus.py) serves the kernels of other modules, which a scan of part of a
        project does not see."""
        if (
            function in facts.get("kernels", ())
            and not facts["package"]
            and self._import_graph()[1].get(path)
            and (facts["module"], function) not in self._package_api()
            and (function not in facts.get("device", ()) or self._uses_own_kernels(path, facts))
        ):
            return Reach(UNREACHED, f"nothing in the project launches or calls the kernel `{function}`")
        return None

    def _private_entry(self, facts: dict, function: str) -> Reach | None:
        """Opt-in: a public function or class nothing in the project uses, in a private module (`_kernel.py`) whose
        package's `__init__` re-exports other names of it but not this one (fastflash's
        `fastflash_attn_train_fused_atomic`, documented as the opt-in entry of its fused-atomic backward). Only a
        user who imports it from the private module runs it. Judged only where the package's `__init__` was
        scanned; a module defining `main` may be a console script's entry point."""
        parent, _, stem = facts["module"].rpartition(".")
        if (
            function.startswith("_")
            or not stem.startswith("_")
            or stem.startswith("__")
            or not self.module_facts.get(parent, {}).get("package")
            or (facts["module"], function) in self._package_api()
            or facts["module"] not in self._api_modules()
            or function in (facts["exports"] or ())
            or "main" in facts["defs"]
        ):
            return None
        return Reach(
            OPT_IN_REACH,
            f"nothing in the project uses `{function}`, and its package does not export it from the private module "
            f"`{stem}`: only a user who imports it from there opts in",
        )

    def _unexported_unused(self, path: str, facts: dict, function: str) -> Reach | None:
        """Unreached: a public function or class nothing in the project uses or imports, outside the API its package
        states: the package's `__init__` lists `__all__` and re-exports other names of the module, not this one
        (triton-runner's `set_gpu_clock`, beside the re-exported `do_bench`). A module no `__init__` exports from is
        left alone, even where only the project's own modules import it: its public helpers are called by users and
        tests (float8-experimental's `fp8_tensor_statistics` in float8_utils, which a human ROCm port changed).
        A module defining `main` may be a console script's entry point. Judged only where the whole package was
        scanned."""
        parent, _, stem = facts["module"].rpartition(".")
        package = self.module_facts.get(parent, {})
        if (
            function.startswith("_")
            or facts["package"]
            or not package.get("package")
            or not self._whole_package(parent)
            or "main" in facts["defs"]
            or (facts["module"], function) in self._package_api()
            or (facts["module"], function) in self._imported_names()
            or facts["module"] not in self._api_modules()
            or package["exports"] is None
            or function in package["exports"]
        ):
            return None
        return Reach(
            UNREACHED,
            f"nothing in the project uses `{function}`, and its package's `__all__` leaves it out, re-exporting other "
            f"names of `{stem}`: it runs nowhere",
        )

    def _uses_own_kernels(self, path: str, facts: dict) -> bool:
        """Does the module launch, call or alias one of its own Triton functions (gemlite's quantizers choosing a
        variant by an alias), rather than only define device functions for other modules' kernels?"""
        return any(
            user[0] == path for kernel in facts.get("kernels", ()) for user in self.users(facts["module"], kernel)
        )

    def _function_reach(self, path: str, facts: dict, function: str) -> Reach:
        users = self.users(facts["module"], function)
        if function in (facts["exports"] or ()):
            return ON_TARGET
        if not users:
            return (
                self._unused_reach(path, facts, function)
                or self._private_entry(facts, function)
                or self._unexported_unused(path, facts, function)
                or ON_TARGET
            )
        verdicts = [self._reach(path, line, column + 1) for path, line, column, _ in users]
        if all(v.reach in _DEAD_KINDS for v in verdicts):
            # NVIDIA-only where one use is; where every use lies in code nothing reaches, unreached like it
            first = next((i for i, v in enumerate(verdicts) if v.reach == NVIDIA_ONLY), 0)
            kind = verdicts[first].reach
            where = self._off_target if kind == NVIDIA_ONLY else "in code nothing reaches"
            user = users[first]
            why = f"every use of `{function}` is {where} (e.g. {user[0]}:{user[1]}: {verdicts[first].reason})"
            # a package's API (re-exported by name from an `__init__`) has callers outside the project
            exported = (facts["module"], function) in self._package_api() or facts["package"]
            return Reach(UNKNOWN if exported and not function.startswith("_") else kind, why)
        opt_in = self._opt_in_uses(facts, function, users, verdicts)
        if opt_in is not None:
            return opt_in
        if all(v.reach != TARGET for v in verdicts):
            return Reach(UNKNOWN, f"every use of `{function}` is {self._off_target} or undecided")
        return ON_TARGET

    def _opt_in_uses(self, facts: dict, function: str, users: list, verdicts: list[Reach]) -> Reach | None:
        """Opt-in when every use of the function outside the project's tests, benchmarks and self-tests is
        dropped, one of them as opt-in (fastflash's `_bwd_fused_atomic`, called only under its
        UNIFLASH_BWD_FUSED_ATOMIC switch). A package's public API is called by users directly: it runs."""
        own = [v for user, v in zip(users, verdicts, strict=True) if not self.outside_use(user[0], user[1])]
        if not own or not all(v.reach in _DROPPED_KINDS for v in own):
            return None
        first = next((v for v in own if v.reach == OPT_IN_REACH), None)
        if first is None or (not function.startswith("_") and (facts["module"], function) in self._package_api()):
            return None
        return Reach(OPT_IN_REACH, f"every use of `{function}` runs only where a user opts in ({first.reason})")


def _named_for(stem: str, vendor: str) -> bool:
    """`xpu.py`, `xpu_worker.py`: a module named for a vendor or device type."""
    return stem == vendor or stem.startswith(vendor + "_")


def _configured_note(facts: dict, scope: str, test: str) -> str:
    """` (every config of the kernel's autotune list sets SPLIT_K = 1)` when the test reads such a parameter."""
    tuned = facts.get("tuned", {}).get(scope, {})
    named = [f"{name} = {value}" for name, value in tuned.items() if re.search(rf"\b{re.escape(name)}\b", test)]
    return f" (every config of the kernel's autotune list sets {', '.join(named)})" if named else ""


def _class_reach(qualname: str, enum: str) -> Reach | None:
    """vllm-style platform classes: `_enum = PlatformEnum.CUDA` (or XPU, TPU...) is not the target's."""
    name = qualname.rsplit(".", 1)[-1]
    if enum in _NOT_TARGET_ENUMS:
        return Reach(NVIDIA_ONLY, f"in `{name}`, the platform class for {enum}")
    if (
        not enum
        and name.endswith(("Platform", "PlatformBase"))
        and any(name.startswith(p) for p in ("Cuda", "NvmlCuda", "NonNvmlCuda", "Xpu", "Tpu", "Hpu", "Npu", "Neuron"))
    ):
        return Reach(NVIDIA_ONLY, f"in `{name}`, another vendor's platform class")
    return None


def _class_reach_on_nvidia(qualname: str, enum: str) -> Reach | None:
    """_class_reach seen from an NVIDIA GPU: vllm's RocmPlatform (`_enum = PlatformEnum.ROCM`) does not load there."""
    name = qualname.rsplit(".", 1)[-1]
    if enum in _NOT_NVIDIA_ENUMS:
        return Reach(NVIDIA_ONLY, f"in `{name}`, the platform class for {enum}")
    if not enum and name.endswith(("Platform", "PlatformBase")) and name.lower().startswith(("rocm", "hip", "amd")):
        return Reach(NVIDIA_ONLY, f"in `{name}`, AMD's platform class")
    return None


def nvidia_reference():
    """The NVIDIA GPU Project.amd_only evaluates platform tests for: the first NVIDIA target of the target facts."""
    from porter.targets import all_targets

    return next(t for t in all_targets().values() if t.vendor == "nvidia")


def _suffix_index(path_of: dict[str, str]) -> dict[str, str | None]:
    index: dict[str, str | None] = {}
    exact = set(path_of)
    for module in path_of:
        parts = module.split(".")
        for cut in range(len(parts)):
            suffix = ".".join(parts[cut:])
            if suffix in index and index[suffix] != module:
                index[suffix] = suffix if suffix in exact else None  # ambiguous unless one is the full name
            else:
                index[suffix] = module
    return index


def _chain(qualname: str):
    while qualname:
        yield qualname
        qualname = qualname.rpartition(".")[0]


def _absolute(module: str, level: int, facts: dict) -> str | None:
    if not level:
        return module
    parts = facts.get("module", "").split(".")
    package = parts if facts.get("package") else parts[:-1]
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _mutable_literal(source: str) -> bool:
    """Does the source build a container that can change in place (`{...}`, `[...]`, `{a, b}`, a comprehension,
    `dict(...)`)? A tuple cannot: another module importing it reads what it shows."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("dict", "list", "set", "OrderedDict", "defaultdict")
    return isinstance(node, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))


def _dotted_text(text: str) -> str | None:
    text = text.strip()
    return text if text and all(part.isidentifier() for part in text.split(".")) else None


def reach_statements(config) -> ReachStatements:
    """The user's statements from a PorterConfig (`nvidia_only`, `rocm_only`, `nvidia_only_paths`)."""
    return ReachStatements(
        tuple(getattr(config, "nvidia_only", ()) or ()),
        tuple(getattr(config, "rocm_only", ()) or ()),
        tuple(getattr(config, "nvidia_only_paths", ()) or ()),
    )


def modules_of(paths) -> dict[str, str]:
    return {module_name(p): p for p in paths}
