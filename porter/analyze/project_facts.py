"""Per-module facts for the project-level analysis, from one stdlib `ast` parse (C, ~10x cheaper than libcst).

A module's facts are plain JSON (cached beside the scan's findings, keyed by the file's sha256):

  imports  local name -> qualified name it is bound to (relative imports made absolute from the path)
  imported every qualified name an import statement names, in any scope (the import graph's edges: `imports`
           keeps a local name's first binding only)
  stars    modules imported with `from m import *` (absolute): names bound nowhere else are looked up there
  defs     module-level name -> source snippets that bind it (small functions, assignments)
  kernels  module-level functions decorated as Triton kernels (`@triton.jit`, `@triton.autotune`...)
  device   those of them that return a value: device functions, called from other kernels, never launched
  tuned    kernel -> {constexpr parameter: value source} that every config of its autotune list sets alike
  params   scope -> {parameter: [default source | "", position, constexpr, overrides]} (kernel constexpr
           parameters, platform flags; a `None` parameter the function replaces with a platform value has that
           value as its default and, as overrides, the parameters whose earlier branches may set it instead)
  regions  [l1, c1, l2, c2, scope, test source, wanted]: code in that range runs only when `test` is `wanted`
           (a class whose `default_enable`/`ENABLED` attribute is a platform test: its whole body)
  scopes   qualname -> [l1, l2, kind, class platform] of every def/class (kind "def" | "class")
  locals   scope -> {name: [value sources]}: per-function bindings (a capability is bound per function)
  refs     name -> [[line, col, {keyword: source, "*": positional count, "*<i>": positional source}]]: uses
           of module-level functions and classes (`Fn.apply(...)` too) and of project imports (positional
           sources: names, constants, platform tests), none after a `raise` / `return`; a call unpacking `*args` keeps, as "*=<name>", the positional
           arguments named like a parameter (`args.sample_method`, `LOGIT_SOFTCAP`); "?" marks a use that only
           names a type (an annotation, an isinstance test)
  exports  names in `__all__` (public API: called from outside the project), or null
  requires [module, line] of every absolute import made unconditionally at module level (not under if/try):
           the module cannot load where one of them cannot
  branches [line, [[module...] per branch]] of a module-level if/else whose every branch imports (nvfuser_direct
           in one, nvfuser in the other): the module cannot load where no branch's imports can
  needs    [l1, c1, l2, c2, module]: code after `try: import module` whose ImportError handler exits (returns,
           raises): it runs only where the module imports
  switches [l1, c1, l2, c2, scope, value source]: a call's keyword set from a platform value or a kernel's flag
           (`launch_pdl=use_pdl`, `warp_specialize=warp_specialize`): the option is off where the value is False
  options  scope -> {parameter: [default source, position]}: a function's option parameters (default False /
           True / None / a string, never rebound in its body): what a default run passes when no caller sets them
  main     [l1, l2] of each module-level `if __name__ == "__main__":` block (a self-test, not a caller)
  ops      "ns::name" -> the module-level function registered as that torch custom op (`@triton_op("ns::name")`,
           `@torch.library.custom_op(...)`), called as `torch.ops.ns.name(...)` wherever the op is loaded
  op_uses  [line, col, "ns::name"] of each `torch.ops.ns.name` reference: a use of the registered function
  records  class -> [[field...], {property: source}, {field: default source}, {field: [sources its methods store
           in it, '' where the value reads a name the method binds]}, has base classes] of each module-level
           dataclass or NamedTuple: a probe object built from platform values (`Gpu(index,
           name, "amd", arch, 0)` under `torch.version.hip`) keeps them in its fields, and a short property reading
           them (`nvidia: return self.vendor == "nvidia"`) is evaluated; a default run reads a field of a settings
           record from its default and what the project stores in it (hip-attn's `args.sample_method`)
  typed    scope -> {parameter: class name}: parameters annotated with a class of the module or of the project
           (`args: "HiPAttentionArgs"`, `Optional[Args]`)
  kwargs   scope -> the name of its `**` parameter, where the function never changes it in place nor rebinds it
           (`kwargs["STOCHASTIC"] = True` before spreading it: it holds more than its callers pass)
  replacing [l1, c1] of each `if` body without else (a region) that returns or rebinds a name the function stored
           before the `if` (`x = slow(a)` then `if FAST: x = fast(a)`): an alternative, not a step an option adds
  fields   attribute names the module stores in some object other than `self` (`args.sample_method = x`,
           `dataclasses.replace(args, sample_method=x)`, `setattr(args, "sample_method", x)`)

Only tests that may be about the platform are kept (names like is_hip, IS_NVIDIA, cap, major, props,
backend...); every other condition is ordinary control flow, which reachability does not need.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from bisect import bisect_right
from collections import Counter
from pathlib import Path
from typing import Any, TypeGuard

FACTS_FORMAT = 29  # 29: an `if` body that rebinds a local from its own value adds a step, it replaces nothing
# 27: references naming only a type; record bases; `if` bodies that replace a value; a `**`
# parameter only where never changed; `__setattr__` stores; a record's stores of its methods' own names undecided
# 26: every binding of a local first bound from a bare project call; module-level names filled in place (`filled`);
# 25: binds leave out assignments whose value calls
# 24: record field defaults and stores, typed parameters, `**` parameters, named positionals
# 23: no locals for names a function declares global; binds; 22: record classes (dataclass / NamedTuple fields and
# short properties)
# 21: short functions calling a platform-named predicate; 20: locals spread as keywords
# 19: uses of module-level classes (`Fn.apply(...)`), which reach their methods
# 18: option parameters, tests of them and locals computed from them; `__main__` blocks; ops
MAX_DEF_LINES = 60  # longer functions are not predicates: their value is not inferred
MAX_SNIPPET = 400  # longer assignment values are not predicates either
MAX_MAPPING = 2000  # a function's local spread as keywords (`**common`): longer ones are not evaluated
MAX_MAPPING_LINES = 40

# An identifier that may carry platform information (a test naming none of them is ordinary control flow).
_PLATFORM_WORD = re.compile(
    r"hip|cuda|rocm|nvidia|amd|gfx|capab|\Asm_?\d|backend|platform|tma|fnuz|arch|tf32|hopper|blackwell|"
    r"ampere|wgmma|props|\Amajor\Z|\Aminor\Z|\Acap\Z|\A_?(is|has|use|supports?|enable)_|\A_?(IS|HAS|USE|ENABLE)_",
    re.IGNORECASE,
)
# A function body that may compute a platform predicate (`def get_device_type(): ... "hip" ...`).
_PLATFORM_TEXT = re.compile(
    r"hip|cuda|rocm|nvidia|gfx|capabilit|get_current_target|platform|fnuz|gcnArch|tma", re.IGNORECASE
)
MAX_PREDICATE_LINES = 30
MAX_BINDING_USES = 24  # a top-level name read more often than this is left to its statement's own reach
MAX_KEYWORD = 60  # a call's keyword values longer than this are not flags (kept only for platform-named keywords)
_TUNERS = re.compile(r"autotune|heuristics")
# A class attribute saying whether the class (a backend, an implementation) is used: `default_enable`, `ENABLED`.
_ENABLE_ATTRIBUTE = re.compile(r"\A_?(default_)?(enable|enabled|is_enabled)\Z", re.IGNORECASE)
KEYWORD_ONLY = 1 << 20  # parameter index of a keyword-only parameter
_SPREAD_NAME = re.compile(r"\*\*\s*([A-Za-z_]\w*)")  # a literal first: the regex engine skips to each `**`
POSITIONAL = "*"  # refs keyword entry: how many positional arguments the call passes (-1: *args, or several **)


def named_positional_key(name: str) -> str:
    """The refs keyword entry of a positional argument named `name`, after a `*args` (see _named_positionals)."""
    return f"{POSITIONAL}={name.lower()}"


TYPE_USE = "?"  # refs keyword entry of a reference that only names a type (an annotation, an isinstance test)
SPREAD = "**"  # refs keyword entry: the source of the first `**mapping` the call spreads (`**_launch_kw(dev)`);
# "**1", "**2"...: the further ones (`**common, **gdn_tree_state_args(...)`)
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# Convolution modules and functions: the ops whose algorithm `torch.backends.cudnn.benchmark` searches for (on ROCm
# MIOpen's exhaustive find); matmuls, norms and attention never consult it
_CONVOLUTIONS = frozenset(
    {f"{lazy}Conv{kind}{n}d" for lazy in ("", "Lazy") for kind in ("", "Transpose") for n in (1, 2, 3)}
    | {f"conv{kind}{n}d" for kind in ("", "_transpose") for n in (1, 2, 3)}
    | {"convolution", "_convolution", "conv_tbc"}
)
# Libraries of ready-made models, many of them convolutional: a project importing one may build its model there
_MODEL_LIBRARIES = frozenset(
    {
        "torchvision", "timm", "diffusers", "transformers", "ultralytics", "mmcv", "mmdet", "mmseg",
        "detectron2", "monai", "segmentation_models_pytorch", "open_clip", "torchaudio", "speechbrain",
    }
)  # fmt: skip
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
# methods that change a dict in place: a local mapping so changed holds keys its binding does not show
_MAPPING_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})
# and the methods that change a list or a set in place: a module-level literal so changed holds more than it shows
_CONTAINER_MUTATORS = frozenset({"append", "extend", "insert", "remove", "add", "discard", "sort", "reverse"})


def module_name(path: str, package: str = "") -> str:
    """'pkg/sub/mod.py' -> 'pkg.sub.mod'; 'pkg/__init__.py' -> 'pkg' (path relative to the scanned root).
    `package`: the dotted package the scanned root itself is (package_of_root), put in front."""
    parts = [*package.split("."), *path.replace("\\", "/").split("/")]
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(p for p in parts if p)


@functools.lru_cache(maxsize=64)
def package_of_root(root: Path) -> str:
    """The dotted package a scanned folder is, '' when it is none: `porter scan freetoken` names its modules
    `freetoken.utils.arch` as `porter scan .` does from the folder above, so that the package's own absolute
    imports (`from freetoken.utils.arch import ...`) resolve. The folders holding `__init__.py` from the root up
    (a rootdir walk, as mypy and pytest do); a folder whose name is not an identifier ends the walk."""
    names: list[str] = []
    folder = root.resolve()
    while (folder / "__init__.py").is_file() and folder.name.isidentifier() and folder.parent != folder:
        names.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(names))


def module_facts(
    text: str, path: str, words: tuple[str, ...] = (), tree: ast.Module | None = None, package: str = ""
) -> dict[str, Any]:
    """The facts of one module; an unparsable module has empty facts (its findings say why).

    `words`: names the user states are platform predicates (`[tool.porter] nvidia_only`): tests naming
    them are kept too. `tree`: the module's `ast` when the caller parsed it already (the scan shares it).
    `package`: the dotted package the scanned root is (package_of_root), in front of the module's name."""
    if tree is None:
        tree = parse_or_none(text)
    return empty_facts(path, package) if tree is None else _Collector(text, path, words, package).collect(tree)


def parse_or_none(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def empty_facts(path: str, package: str = "") -> dict[str, Any]:
    return {
        "format": FACTS_FORMAT,
        "module": module_name(path, package),
        "package": path.endswith("__init__.py"),
        "imports": {},
        "imported": [],
        "stars": [],
        "defs": {},
        "params": {},
        "regions": [],
        "scopes": {},
        "locals": {},
        "refs": {},
        "exports": None,
        "requires": [],
        "branches": [],
        "needs": [],
        "switches": [],
        "tuned": {},
        "options": {},
        "main": [],
        "ops": {},
        "op_uses": [],
        "records": {},
        "typed": {},
        "kwargs": {},
        "replacing": [],
        "fields": [],
        "kernels": [],
        "device": [],
        "binds": [],  # top-level imports / assignments and where the module reads their names (_binding_uses)
        "filled": [],  # module-level names some scope changes in place (`_MODES[name] = fn`, `_CHOICES.append(x)`)
        "convolves": False,  # names a convolution or imports a model library (`_CONVOLUTIONS`, `_MODEL_LIBRARIES`)
    }


_PLATFORM_IN_TEXT = re.compile(
    r"hip|cuda|rocm|nvidia|amd|gfx|capab|\bsm_?\d|backend|platform|tma|fnuz|arch|tf32|hopper|blackwell|ampere|"
    r"wgmma|instinct|props|\bmajor\b|\bminor\b|\bcap\b|\b_?(is|has|use|supports?|enable)_|\b_?(IS|HAS|USE|ENABLE)_",
    re.IGNORECASE,
)


def _top_level_binds(body: list[ast.stmt]) -> list[tuple[int, int, list[str]]]:
    """(first line, last line, names) of each top-level `from m import a, b` (no star) and `NAME = value` whose value
    calls nothing: a call (`_ext = load(sources=["k.cu"])`) runs at every import, whoever reads the name."""
    out = []
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and all(alias.name != "*" for alias in statement.names):
            bound = [alias.asname or alias.name for alias in statement.names]
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and not _calls(statement.value):
            bound = [statement.targets[0].id] if isinstance(statement.targets[0], ast.Name) else []
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None and not _calls(statement.value):
            bound = [statement.target.id] if isinstance(statement.target, ast.Name) else []
        else:
            continue
        if bound and "__all__" not in bound:
            out.append((statement.lineno, statement.end_lineno or statement.lineno, bound))
    return out


def _calls(value: ast.expr) -> bool:
    return any(isinstance(node, ast.Call) for node in ast.walk(value))


def _unconditional_imports(body: list[ast.stmt]) -> list[list]:
    """[module, line] of the absolute imports a module runs whenever it loads (top level, outside if/try)."""
    out: list[list] = []
    for statement in body:
        if isinstance(statement, ast.Import):
            out.extend([alias.name, statement.lineno] for alias in statement.names)
        elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            out.append([statement.module, statement.lineno])
    return out


def _branch_imports(body: list[ast.stmt]) -> list[list]:
    """[line, [[module...] per branch]] of each module-level if/else (elif chains included) whose every branch
    imports a module unconditionally."""
    out: list[list] = []
    for statement in body:
        if not isinstance(statement, ast.If) or not statement.orelse:
            continue
        branches, node = [], statement
        while True:
            branches.append(_absolute_imports(node.body))
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and node.orelse[0].orelse:
                node = node.orelse[0]
                continue
            branches.append(_absolute_imports(node.orelse))
            break
        if all(branches):
            out.append([statement.lineno, branches])
    return out


# Every match of _PLATFORM_IN_TEXT in ASCII text holds one of these, lowercased: most texts hold none, and
# these substring tests cost a fraction of the case-insensitive alternation's scan.
_PLATFORM_IN_TEXT_PARTS = (
    *("hip", "cuda", "rocm", "nvidia", "amd", "gfx", "cap", "sm", "backend", "platform", "tma", "fnuz", "arch"),
    *("tf32", "hopper", "blackwell", "ampere", "wgmma", "instinct", "props", "major", "minor"),
    *("is_", "has_", "use_", "support", "enable_"),
)


# any of the parts as a substring, in one regex search (a generator over the parts cost 2.5x as much)
_ANY_PLATFORM_PART = re.compile("|".join(re.escape(part) for part in _PLATFORM_IN_TEXT_PARTS))


_ENVIRONMENT_READS = ("environ", "getenv")


def _reads_switch(test: ast.expr) -> bool:
    """Does a test read the environment or a module constant (`SCT_CHUNK > 0`, `if USE_PDL:`), either of which may
    be an opt-in switch that a default run leaves off?"""
    for node in _nodes(test):  # Names and Attributes only: the leaves _nodes skips never count
        kind = type(node)
        if kind is ast.Name:
            if node.id in _ENVIRONMENT_READS or len(node.id) > 1 and node.id.isupper():
                return True
        elif kind is ast.Attribute and node.attr in _ENVIRONMENT_READS:
            return True
    return False


def is_platform_text(text: str) -> bool:
    """Does an expression's source name anything that may be about the platform?"""
    if text.isascii():
        if _ANY_PLATFORM_PART.search(text.lower()) is None:
            return False
    return _PLATFORM_IN_TEXT.search(text) is not None


class _Collector:
    def __init__(self, text: str, path: str, words: tuple[str, ...] = (), package: str = "") -> None:
        self.words = words
        self.lines = text.splitlines()
        # names spread as keywords (`f(**name)`, `dict(a=1, **name)`): one regex pass, as most modules spread none
        self.spreads = _spread_names(text) if "**" in text else set()
        self.path = path
        self.facts = empty_facts(path, package)
        self.module = self.facts["module"]
        self.package = self.facts["package"]
        self.top = self.module.split(".")
        self.flags: dict[str, set[str]] = {}  # def qualname -> its constexpr parameters
        self.defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # def qualname -> its node
        self.mutated: dict[str, set[str]] = {}  # def qualname -> names it changes in place (when asked)
        self.followed: dict[str, set[str]] = {}  # def qualname -> locals bound first from a project call
        self.assigned: dict[str, dict[str, list[int]]] = {}  # def qualname -> name -> lines assigning it (when asked)
        self.outer: dict[str, set[str]] = {}  # def qualname -> names it declares global / nonlocal (when asked)
        self.stores: dict[str, Counter[str]] = {}  # def qualname -> how often each name is stored (when asked)
        self.tree: ast.Module | None = None
        self.bindings: dict[str, ast.AST] | None = None  # module-level names bound once (when asked)
        self.class_names: set[str] = set()  # module-level classes
        self.dead: list[tuple[int, int]] = []  # line spans after a `raise` / `return` in the same block

    def collect(self, tree: ast.Module) -> dict[str, Any]:
        self.tree = tree
        self.class_names = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
        self._block(tree.body, "", module_level=True)
        self._walk(tree, _top_level_binds(tree.body) if not self.package else [])
        self.facts["requires"] = _unconditional_imports(tree.body)
        self.facts["branches"] = _branch_imports(tree.body)
        self.facts["main"] = [[s.lineno, s.end_lineno or s.lineno] for s in tree.body if _is_main_block(s)]
        if any(imported.split(".", 1)[0] in _MODEL_LIBRARIES for imported in self.facts["imported"]):
            self.facts["convolves"] = True
        return self.facts

    # -- statements, with the scope each lies in ------------------------------------------------
    def _block(self, body: list[ast.stmt], scope: str, module_level: bool) -> None:
        for index, statement in enumerate(body):
            self._statement(statement, scope, module_level)
            self._early_exit(statement, body[index + 1 :], scope)
        for statement in body:
            for name in _BLOCK_FIELDS:
                inner = getattr(statement, name, None)
                if (
                    isinstance(inner, list)
                    and inner
                    and not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                ):
                    self._block(inner, scope, module_level)
            for handler in getattr(statement, "handlers", ()):
                self._block(handler.body, scope, module_level)
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner_scope = f"{scope}.{statement.name}" if scope else statement.name
                self._block(statement.body, inner_scope, module_level=False)

    def _statement(self, node: ast.stmt, scope: str, module_level: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node, scope, module_level)
        elif isinstance(node, ast.ClassDef):
            self._class(node, scope, module_level)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                self._assign(target, node.value, scope, module_level)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        imports = self.facts["imports"]
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                imports.setdefault(local, alias.name if alias.asname else local)
                self._imported(alias.name)
            return
        base = self._absolute(node.module or "", node.level)
        if base is None:
            return
        for alias in node.names:
            if alias.name != "*":
                qualified = f"{base}.{alias.name}" if base else alias.name
                imports.setdefault(alias.asname or alias.name, qualified)
                self._imported(qualified)
            elif base and base not in self.facts["stars"]:
                self.facts["stars"].append(base)
                self._imported(base)

    def _imported(self, qualified: str) -> None:
        """Record an import's target for the import graph. `imports` binds each local name once, so two
        functions importing `sparse_attn` from different modules would leave the second module unseen."""
        if qualified not in self.facts["imported"]:
            self.facts["imported"].append(qualified)

    def _absolute(self, module: str, level: int) -> str | None:
        if not level:
            return module
        package = self.top if self.package else self.top[:-1]
        if level - 1 > len(package):
            return None
        base = package[: len(package) - (level - 1)]
        return ".".join([*base, module] if module else base)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: str, module_level: bool) -> None:
        qualname = f"{scope}.{node.name}" if scope else node.name
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        self.facts["scopes"][qualname] = [start, node.end_lineno or node.lineno, "def", ""]
        self._params(node, qualname)
        self._typed(node, qualname)
        self.defs[qualname] = node
        self._options(node, qualname)
        if module_level and any(last_name(_called(d)) in _KERNEL_DECORATORS for d in node.decorator_list):
            self.facts["kernels"].append(node.name)
            if _returns_value(node):
                self.facts["device"].append(node.name)
        if module_level:
            for op in filter(None, map(_custom_op_name, node.decorator_list)):
                self.facts["ops"][op] = node.name
        if module_level:
            snippet = self._predicate_source(node, start)
            if snippet is not None:
                self.facts["defs"].setdefault(node.name, []).append(snippet)
            else:
                self.facts["defs"].setdefault(node.name, [])  # known to be a function, value not inferred

    def _spread_text(self, spread: ast.expr) -> str:
        """The source of a spread mapping ('' when long). A long call of a module-level builder keeps its callee
        only (`gdn_tree_state_args(...)`): a project function is evaluated from its body, not from the arguments."""
        text = self._text(spread)
        if len(text) <= MAX_KEYWORD:
            return text
        called = spread.func if isinstance(spread, ast.Call) else None
        return f"{called.id}(...)" if isinstance(called, ast.Name) and called.id in self.defs else ""

    def _keep_builder(self, spread: ast.expr) -> None:
        """Keep the body of a module-level function whose result a call spreads as keywords (`**_launch_kw(dev)`):
        which keywords it returns on the target decides the launched kernel's constexpr defaults."""
        called = spread.func if isinstance(spread, ast.Call) else None
        name = called.id if isinstance(called, ast.Name) else ""
        node = self.defs.get(name)
        if node is None or name not in self.facts["defs"] or self.facts["defs"][name]:
            return
        # its code, docstring left out: eagle-harness's `gdn_tree_state_args` documents each key it returns
        code = self._code_source(node, node.lineno, node.end_lineno or node.lineno)
        if code is not None:
            self.facts["defs"][name] = [code]

    def _typed(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> None:
        """Parameters annotated with a class this module defines or imports from the project (`args:
        "HiPAttentionArgs"`), and the name of the `**` parameter."""
        typed = {}
        for arg, _default, _index in _parameters(node):
            name = _annotated_class(arg.annotation)
            if name and (name in self.class_names or self.facts["imports"].get(name, "").split(".")[0] == self.top[0]):
                typed[arg.arg] = name
        if typed:
            self.facts["typed"][qualname] = typed
        if node.args.kwarg is not None and not _changed_anywhere(node, node.args.kwarg.arg):
            self.facts["kwargs"][qualname] = node.args.kwarg.arg

    def _params(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> None:
        params = {}
        every = _parameters(node)
        # a kernel's constexpr flag (`ptx_pack: tl.constexpr = False`) is kept whatever its name: `if ptx_pack:`
        # compiles its branch out unless a launch passes a true value; autotune/heuristics may supply it instead
        tuned = any(_TUNERS.search(self._text(d)) for d in node.decorator_list)
        configured = self._configured(node) if tuned else {}
        flags = self.flags.setdefault(qualname, set())
        for arg, default, index in every:
            constexpr = arg.annotation is not None and _is_constexpr(arg.annotation)
            if constexpr:
                flags.add(arg.arg)
            # a parameter spread as keywords (`**common` in `_launch_walk(common, ...)`): its callers' mapping decides
            # the launched kernel's constexpr defaults, as a local spread does
            if constexpr or _PLATFORM_WORD.search(arg.arg) or arg.arg in self.spreads:
                # a launch that leaves a tuned kernel's flag out gets the config's value, not the default
                known = default is not None and not (tuned and constexpr)
                params[arg.arg] = [self._text(default) if default is not None and known else "", index, constexpr]
                if constexpr and arg.arg in configured:
                    self.facts["tuned"].setdefault(qualname, {})[arg.arg] = configured[arg.arg]
        index_of = {arg.arg: index for arg, _, index in every}
        defaulted = {arg.arg: default for arg, default, _ in every if default is not None}
        for name, (value, overrides) in _platform_defaults(node.body, defaulted, self._text).items():
            flags.add(name)  # `if no_use_persistent:` is decided like a kernel's flag
            params[name] = [value, index_of[name], False, overrides]
        if params:
            self.facts["params"][qualname] = params

    def _options(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> None:
        """A function's option parameters (`use_atomic: bool = False`, `mode="center"`, `_owners=None`) that its
        body never rebinds: a test of one decides a branch by what the callers pass, or by the default when none
        sets it (a default run; never what the platform decides)."""
        declared = self.facts["params"].get(qualname, {})
        options = {
            arg.arg: [repr(default.value), index]
            for arg, default, index in _parameters(node)
            if _is_option_default(default)
            and _plain_param(declared.get(arg.arg))
            and self._store_count(qualname, arg.arg) == 0
        }
        if options:
            self.facts["options"][qualname] = options

    def _reads_option(self, value: ast.expr, scope: str) -> bool:
        """Does an expression read an option parameter of the function it lies in, or a local computed from one
        (`prec_code = 1 if mode == "tf32x3" else 0`)?"""
        options = self.facts["options"].get(scope)
        if not options:
            return False
        bound = self.facts["locals"].get(scope, {})
        return any(isinstance(n, ast.Name) and (n.id in options or n.id in bound) for n in _nodes(value))

    def _configured(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
        """Constexpr parameters every config of the kernel's autotune list sets to one value (fbgemm's SPLIT_K = 1
        in every config its nested loops build): parameter -> that value's source. A heuristics decorator may set
        a parameter itself, so what it names is left out."""
        configs: list[dict[str, Any] | None] | None = None
        computed: set[str] = set()
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            called = last_name(decorator.func)
            if called == "autotune":
                argument = decorator.args[0] if decorator.args else _keyword(decorator, "configs")
                configs = _ConfigList(self._module_bindings()).values(argument) if argument is not None else None
            elif called == "heuristics":
                heuristics = decorator.args[0] if decorator.args else _keyword(decorator, "values")
                if not isinstance(heuristics, ast.Dict):
                    return {}
                computed.update(str(k.value) for k in heuristics.keys if isinstance(k, ast.Constant))
        read = [config for config in configs or () if config is not None]
        if not read or len(read) != len(configs or ()):
            return {}
        out = {}
        for name in set(read[0]) - computed:
            values = [config.get(name, _UNKNOWN) for config in read]
            if all(v is not _UNKNOWN and len(v) == 1 for v in values) and len({repr(v[0]) for v in values}) == 1:
                out[name] = repr(values[0][0])
        return out

    def _module_bindings(self) -> dict[str, ast.AST]:
        """Module-level names bound once (to a value or a function): where a config list may be built."""
        if self.bindings is None:
            counts: Counter[str] = Counter()
            found: dict[str, ast.AST] = {}
            for statement in self.tree.body if self.tree is not None else ():
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    counts[statement.name] += 1
                    found[statement.name] = statement
                elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    for target in targets:
                        if isinstance(target, ast.Name):
                            counts[target.id] += 1
                            found[target.id] = statement.value
            self.bindings = {name: value for name, value in found.items() if counts[name] == 1}
        return self.bindings

    def _class(self, node: ast.ClassDef, scope: str, module_level: bool) -> None:
        qualname = f"{scope}.{node.name}" if scope else node.name
        enum = ""
        for statement in node.body:
            if isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_enum" for t in statement.targets
            ):
                value = statement.value
                enum = value.attr if isinstance(value, ast.Attribute) else ""
        self.facts["scopes"][qualname] = [
            node.decorator_list[0].lineno if node.decorator_list else node.lineno,
            node.end_lineno or node.lineno,
            "class",
            enum,
        ]
        for statement in node.body:  # `default_enable = IS_NVIDIA_HOPPER and ...`: the class is off elsewhere
            switch = _class_switch(statement)
            if switch is not None:
                self._region(node, node, scope, switch, True)
        if module_level:
            self.facts["defs"].setdefault(node.name, [])
            record = self._record(node)
            if record is not None:
                self.facts["records"][node.name] = record

    def _record(self, node: ast.ClassDef) -> list | None:
        """[[field...], {property: source}] of a dataclass or NamedTuple (fields in the order its constructor
        takes them positionally), None for any other class. Properties longer than a predicate are left out."""
        dataclass = any(last_name(_called(d)) == "dataclass" for d in node.decorator_list)
        if not dataclass and not any(last_name(base) == "NamedTuple" for base in node.bases):
            return None
        fields: list[str] = []
        properties: dict[str, str] = {}
        defaults: dict[str, str] = {}
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                if "ClassVar" not in self._text(statement.annotation):
                    fields.append(statement.target.id)
                    if statement.value is not None and not _factory(statement.value):
                        defaults[statement.target.id] = self._text(statement.value)
            elif isinstance(statement, ast.FunctionDef) and any(
                last_name(d) in ("property", "cached_property") for d in statement.decorator_list
            ):
                snippet = self._source(statement.lineno, statement.end_lineno or statement.lineno)
                if snippet is not None and snippet.count("\n") < MAX_PREDICATE_LINES:
                    properties[statement.name] = snippet
        # a base class (a dataclass's) adds fields before these, and stores of its own
        bases = any(last_name(base) not in ("NamedTuple", "object") for base in node.bases)
        return [fields, properties, defaults, _own_stores(node, fields, self._text), bases] if fields else None

    def _assign(self, target: ast.expr, value: ast.expr, scope: str, module_level: bool) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    self._bind(element.id, f"({self._text(value)})[{index}]", value, scope, module_level)
            return
        if not isinstance(target, ast.Name):
            return
        if module_level and target.id == "__all__" and isinstance(value, (ast.List, ast.Tuple)):
            self.facts["exports"] = [
                e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
        self._bind(target.id, None, value, scope, module_level)

    def _bind(self, name: str, source: str | None, value: ast.expr, scope: str, module_level: bool) -> None:
        # module level: every binding (a re-export `tl = triton.language`, `DEVICE_TYPE = get_device_type()`);
        # in a function only platform-looking ones (`major, minor = torch.cuda.get_device_capability()`)
        if not module_level and len(self.facts["params"].get(scope, {}).get(name, ())) > 3:
            return  # a platform-defaulted parameter: its value is the param's (default and call sites)
        if not module_level and name in self._declared_outer(scope):
            return  # `global _native`: the function fills a module-level name, no local (its first read is the module's)
        # first: it marks a local first bound from a project call, whose every later binding must be kept; a test
        # before it that keeps this binding alone (`w8a8 = e4m3_native()`) would drop a later `w8a8 = True`
        if not (
            module_level
            or self._follows_project_call(name, value, scope)
            or _PLATFORM_WORD.search(name)
            or is_platform_text(self._text(value))
            or self._reads_platform_local(name, value, scope)
            or self._hard_coded_switch(name, value, scope)
            or (self._reads_option(value, scope) and self._store_count(scope, name) == 1)
            or self._calls_own_predicate(value)
            or self._spread_local(name, value, scope)
        ):
            if module_level:
                self.facts["defs"].setdefault(name, []).append("")  # bound to something not inferred
            return
        # a mapping spread as launch keywords keeps its longer source: its keys decide which constexprs a launch
        # passes (eagle-harness's `common = dict(inputs=..., H=H, ..., **pdl)`, 15 lines)
        mapping = bool(scope) and name in self.spreads and source is None
        source = source or (self._text(value, MAX_MAPPING_LINES, MAX_MAPPING) if mapping else self._text(value))
        if len(source) > (MAX_MAPPING if mapping else MAX_SNIPPET):
            source = ""
        elif mapping and name in self._mutated(scope):
            # a mapping filled after its binding holds more keys than it shows: the keys its function's body sets
            # unconditionally (eagle-harness's `meta["USE_GDC"] = pdl`) are added to it, any other change hides it
            source = self._filled_mapping(name, scope, source)
        if module_level:
            self.facts["defs"].setdefault(name, []).append(f"{name} = {source}" if source else "")
            return
        earlier = self.facts["locals"].get(scope, {}).get(name, [])
        if source and len(earlier) == 1 and earlier[0] and self._rebound_under_itself(name, value, scope):
            # `if pdl_supported: pdl_supported = cap[0] >= 9` (lmdeploy) runs only where the first value is truthy
            source = f"({earlier[0]}) and ({source})"
        self.facts["locals"].setdefault(scope, {}).setdefault(name, []).append(source)

    def _rebound_under_itself(self, name: str, value: ast.expr, scope: str) -> bool:
        """Is the binding inside an `if name:` (or `if name and ...:`) of its own function?"""
        function = self.defs.get(scope)
        if function is None:
            return False
        for node in _nodes(function):
            if isinstance(node, ast.If) and _tests_truth_of(node.test, name):
                if any(inner is value for statement in node.body for inner in _nodes(statement)):
                    return True
        return False

    def _reads_platform_local(self, name: str, value: ast.expr, scope: str) -> bool:
        """Does the value read a platform binding of the same function (litgpt's `gpu_name =
        device_properties.name.lower()` after `device_properties = torch.cuda.get_device_properties(0)`)?
        Only for a name bound once: locals merge every binding whatever the flow, and a second one that runs
        only under the first (lmdeploy's `pdl_supported = nv_cap[0] >= 9` under `if pdl_supported:`) would
        leave undecided what the first decides."""
        bound = self.facts["locals"].get(scope)
        return (
            bool(bound)
            and any(isinstance(n, ast.Name) and n.id in bound for n in _nodes(value))  # every Name, as ast.walk
            and self._store_count(scope, name) == 1
        )

    def _follows_project_call(self, name: str, value: ast.expr, scope: str) -> bool:
        """Is the local bound, first, from a call of a project function (freetoken's `w8a8 = input_scale is not
        None and e4m3_native()`), and is every store of it an assignment? Then all its bindings are kept (`w8a8 =
        False` under a later branch), so that their merge is what the name may hold; a name also bound by a loop,
        a `with` or an augmented assignment, or first bound to something else, is left out."""
        followed = self.followed.setdefault(scope, set())
        if name in followed:
            return True
        if not scope or not self._calls_predicate(value):
            return False
        stores = self._assigned_stores(scope).get(name, ())
        if not stores or len(stores) != self._store_count(scope, name) or min(stores) != value.lineno:
            return False
        followed.add(name)
        return True

    def _assigned_stores(self, scope: str) -> dict[str, list[int]]:
        """name -> the lines of the plain assignments (`x = ...`, `x, y = ...`, `x: T = ...`) storing it in the
        function, nested blocks included."""
        found = self.assigned.get(scope)
        if found is None:
            found = self.assigned[scope] = {}
            for node in _nodes(self.defs[scope]) if scope in self.defs else ():
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets = [node.target]
                else:
                    continue
                for target in targets:
                    for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                        if isinstance(element, ast.Name):
                            found.setdefault(element.id, []).append(node.value.lineno)
        return found

    def _calls_own_predicate(self, node: ast.AST) -> bool:
        """Is the node a call of a function of this module whose body reads the platform (its source is kept:
        grouped-nf4-gemm's `_why = fp8_compute_unsupported(q, ...)`, a reason string on ROCm), or of a function
        imported from the project's own package (freetoken's `w8a8 = input_scale is not None and e4m3_native()`,
        defined in a sibling module this pass does not see: the project analysis reads its body)?"""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return False
        name = node.func.id
        if any(s.startswith(("def ", "@", "async ")) for s in self.facts["defs"].get(name, ())):
            return True
        imported = self.facts["imports"].get(name)
        return imported is not None and name not in self.facts["defs"] and self._own_package(imported)

    def _own_package(self, qualified: str) -> bool:
        """Is a dotted name inside this module's top-level package (not the module itself, not a library)?"""
        head = self.top[0]
        return len(self.top) > 1 and qualified.startswith(head + ".") and not qualified.startswith(self.module + ".")

    def _spread_local(self, name: str, value: ast.expr, scope: str) -> bool:
        """Is a function's local spread as keywords somewhere in the module (`pdl = _pdl_kw(dev, T)` then
        `dict(..., **pdl)`): which keywords it holds on the target decides a launched kernel's constexprs? A builder
        of this module it calls is kept too, as for a call spreading the builder's result directly."""
        if not scope or name not in self.spreads:
            return False
        if isinstance(value, ast.Call):
            self._keep_builder(value)
        return True

    def _declared_outer(self, scope: str) -> set[str]:
        """Names the function declares `global` or `nonlocal`: stores to them are not its locals."""
        found = self.outer.get(scope)
        if found is None:
            node = self.defs.get(scope)
            found = self.outer[scope] = {
                name
                for statement in (_nodes(node) if node is not None else ())
                if isinstance(statement, (ast.Global, ast.Nonlocal))
                for name in statement.names
            }
        return found

    def _filled_mapping(self, name: str, scope: str, source: str) -> str:
        """`dict(**(<binding>), KEY=(<value>), ...)` for a mapping whose only changes are `name["KEY"] = value`
        statements in the function's own body (not in a branch or loop, where the key may be missing); '' when
        anything else changes it."""
        definition = self.defs.get(scope)
        if definition is None:
            return ""
        keys = []
        for statement in definition.body:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                continue
            target = statement.targets[0]
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and target.value.id == name
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
                and target.slice.value.isidentifier()
            ):
                value = self._text(statement.value)
                if not value:
                    return ""
                keys.append(f"{target.slice.value}=({value})")
        if not keys or self._mutations(scope, name) != len(keys):
            return ""
        return f"dict(**({source}), {', '.join(keys)})"

    def _mutations(self, scope: str, name: str) -> int:
        """How many in-place changes of `name` the function makes (subscript stores and deletes, mutating methods,
        augmented assignments), nested blocks included."""
        count = 0
        for node in _nodes(self.defs[scope]):
            base = _changed_in_place(node)
            count += isinstance(base, ast.Name) and base.id == name
        return count

    def _mutated(self, scope: str) -> set[str]:
        """Names a function changes in place (`d[k] = v`, `del d[k]`, `d.update(...)`, `d |= ...`): a local bound to
        a mapping there does not hold only the keys its binding shows."""
        found = self.mutated.get(scope)
        if found is None:
            found = self.mutated[scope] = set()
            for node in _nodes(self.defs[scope]) if scope in self.defs else ():
                base = _changed_in_place(node)
                if isinstance(base, ast.Name):
                    found.add(base.id)
        return found

    def _hard_coded_switch(self, name: str, value: ast.expr, scope: str) -> bool:
        """Is a function's local bound once, to True or False (hip-attn's `using_fused_iteration = True`, the other
        branch kept for reference)? A test of it decides its branch wherever the function runs."""
        return (
            isinstance(value, ast.Constant)
            and isinstance(value.value, bool)
            and bool(scope)
            and self._store_count(scope, name) == 1
        )

    def _tests_hard_coded_switch(self, test: ast.expr, scope: str) -> bool:
        """Does a test read only such a local (`if using_fused_iteration:`, `if not debug:`)?"""
        node = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        bound: list[str] = self.facts["locals"].get(scope, {}).get(node.id, []) if isinstance(node, ast.Name) else []
        return bound in (["True"], ["False"])

    def _tests_platform_local(self, test: ast.expr, scope: str) -> bool:
        """Does a test read one local the function keeps (`if why:`, `assert _why is None` after `why =
        rocm_refusal(...)`, a reason string on ROCm and None elsewhere)?"""
        bound = self.facts["locals"].get(scope)
        if not bound:
            return False
        node = _tested(test, none_only=True)
        return isinstance(node, ast.Name) and node.id in bound

    def _store_count(self, scope: str, name: str) -> int:
        """How often the function `scope` stores `name` (counted once per function, and only when asked: most
        bindings never need it, and walking every function body would cost the facts pass a walk per def)."""
        node = self.defs.get(scope)
        if node is None:
            return 0
        if scope not in self.stores:
            self.stores[scope] = Counter(
                n.id for n in _nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            )
        return self.stores[scope][name]

    def _positional_values(self, args: list[ast.expr]) -> dict[str, str]:
        """Positional arguments that may decide a flag, as source, keyed `*<index>`: names, constants and short
        platform expressions (conch's launch passes `cxpr_is_rocm` positionally); runtime data is left out."""
        out = {}
        for index, arg in enumerate(args):
            if isinstance(arg, ast.Name):
                out[f"{POSITIONAL}{index}"] = arg.id
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, (bool, int, type(None))):
                out[f"{POSITIONAL}{index}"] = repr(arg.value)
            elif isinstance(arg, (ast.Attribute, ast.Call, ast.UnaryOp, ast.Compare, ast.BoolOp)):
                text = self._text(arg)
                if len(text) <= MAX_KEYWORD and is_platform_text(text):
                    out[f"{POSITIONAL}{index}"] = text
        return out

    def _named_positionals(self, args: list[ast.expr]) -> dict[str, str]:
        """Positional arguments of a call unpacking `*args`, keyed `*=<name>` by their last name, lowercased (the
        launch `kernel[grid](*strides, args.sample_method, LOGIT_SOFTCAP)` passes them to SAMPLE_METHOD and
        LOGIT_SOFTCAP); a name two arguments share is left out."""
        named: dict[str, str] = {}
        seen: Counter[str] = Counter()
        for arg in args:
            name = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else None
            if name is None:
                continue
            key = named_positional_key(name)
            seen[key] += 1
            text = self._text(arg)
            if text and len(text) <= MAX_KEYWORD:
                named[key] = text
        return {key: text for key, text in named.items() if seen[key] == 1}

    def _keyword_value(self, keyword: ast.keyword) -> str:
        """A call's keyword value as source: every keyword is recorded (a flag passed by name is not left to its
        default), long values of keywords that name nothing about the platform as '' (runtime data)."""
        text = self._text(keyword.value)
        return text if len(text) <= MAX_KEYWORD or _PLATFORM_WORD.search(keyword.arg or "") else ""

    def _text(self, node: ast.expr | ast.stmt, max_lines: int = 8, chars: int = MAX_SNIPPET) -> str:
        """The node's source text, parenthesised so that a multi-line expression parses alone ('' when longer than
        `max_lines` + 1 lines or `chars` characters)."""
        first, last = node.lineno, node.end_lineno or node.lineno
        if last - first > max_lines:
            return ""
        if first == last:
            line = self.lines[first - 1]
            text = (
                line.encode()[node.col_offset : node.end_col_offset].decode(errors="replace")
                if not line.isascii()
                else line[node.col_offset : node.end_col_offset]
            )
        else:
            lines = [line.encode() for line in self.lines[first - 1 : last]]
            lines[-1], lines[0] = lines[-1][: node.end_col_offset], lines[0][node.col_offset :]
            text = b"\n".join(lines).decode(errors="replace")
        text = f"({text})" if "\n" in text else text
        return text if len(text) <= chars else ""

    def _predicate_source(self, node: ast.FunctionDef | ast.AsyncFunctionDef, start: int) -> str | None:
        """The source of a module-level function whose value may be inferred: named like a platform predicate, or
        short and reading the platform; None for any other. A long function counts its code only: its docstring is
        left out of the source and comment-only lines out of its length (grouped-nf4-gemm's
        `fp8_compute_unsupported`: 27 lines of docstring and 11 of comments over code that refuses ROCm first)."""
        end = node.end_lineno or node.lineno
        snippet = self._source(start, end)
        named = _PLATFORM_WORD.search(node.name) is not None
        if snippet is not None and snippet.count("\n") < MAX_PREDICATE_LINES:
            return snippet if named or _PLATFORM_TEXT.search(snippet) or _calls_platform_named(node) else None
        if snippet is not None and not named and not _PLATFORM_TEXT.search(snippet):
            return None  # nothing about the platform in it, docstring included
        code = self._code_source(node, start, end)
        if code is None or named:
            return code
        short = code.count("\n") < MAX_PREDICATE_LINES or _code_lines(code) < MAX_PREDICATE_LINES
        return code if short and _PLATFORM_TEXT.search(code) else None

    def _code_source(self, node: ast.FunctionDef | ast.AsyncFunctionDef, start: int, end: int) -> str | None:
        """A function's source without its docstring; None when its code is too long to be a predicate."""
        docstring = node.body[0] if len(node.body) > 1 and _is_docstring(node.body[0]) else None
        if docstring is None or docstring.lineno <= node.lineno or node.body[1].lineno <= (docstring.end_lineno or 0):
            lines = self.lines[start - 1 : end]
        else:
            lines = self.lines[start - 1 : docstring.lineno - 1] + self.lines[docstring.end_lineno or end : end]
        snippet = "\n".join(lines)
        return snippet if _code_lines(snippet) <= MAX_DEF_LINES else None

    def _source(self, first: int, last: int) -> str | None:
        if last - first + 1 > MAX_DEF_LINES:
            return None
        return "\n".join(self.lines[first - 1 : last])

    # -- guard regions ---------------------------------------------------------------------------
    def _early_exit(self, statement: ast.stmt, rest: list[ast.stmt], scope: str) -> None:
        """`if is_hip(): return ...` leaves the rest of the block to the other platform;
        `assert torch.version.cuda` leaves it to CUDA."""
        if not rest:
            return
        if isinstance(statement, ast.Try) and _import_probe_exits(statement):
            for module in _absolute_imports(statement.body):
                self.facts["needs"].append(
                    [rest[0].lineno, rest[0].col_offset, rest[-1].end_lineno, rest[-1].end_col_offset, module]
                )
        if scope and isinstance(statement, (ast.Import, ast.ImportFrom)):
            for module in self._own_package_imports(statement):
                self.facts["needs"].append(
                    [rest[0].lineno, rest[0].col_offset, rest[-1].end_lineno, rest[-1].end_col_offset, module]
                )
        if isinstance(statement, (ast.Raise, ast.Return)):  # never runs: a call there passes no value to anything
            self.dead.append((rest[0].lineno, rest[-1].end_lineno or rest[-1].lineno))
        if isinstance(statement, ast.Assert):
            self._region(rest[0], rest[-1], scope, statement.test, True)
        elif isinstance(statement, ast.If) and not statement.orelse and _ends_in_exit(statement.body):
            self._region(rest[0], rest[-1], scope, statement.test, False)

    def _own_package_imports(self, node: ast.Import | ast.ImportFrom) -> list[str]:
        """What an import inside a function loads from this module's own top-level package: the rest of the
        function runs only if that module loads (a chain importing a CuTe DSL sibling before its Triton ones)."""
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = self._absolute(node.module or "", node.level)
            names = [f"{base}.{alias.name}" if base else alias.name for alias in node.names if alias.name != "*"]
        return [name for name in names if name.split(".", 1)[0] == self.top[0]]

    def _region(
        self, first: ast.expr | ast.stmt, last: ast.expr | ast.stmt, scope: str, test: ast.expr, wanted: bool
    ) -> None:
        text = self._text(test)
        if (
            not is_platform_text(text)
            and not any(word in text for word in self.words)
            and not self._flag_test(test, scope)
            and "TYPE_CHECKING" not in text  # imports for type checkers only: never run
            and not self._calls_predicate(test)
            and not _reads_switch(test)
            and not self._tests_hard_coded_switch(test, scope)
            and not self._reads_option(test, scope)
            and not self._tests_platform_local(test, scope)
        ):
            return
        decorators = getattr(first, "decorator_list", None)
        start = decorators[0] if decorators else first
        self.facts["regions"].append(
            [start.lineno, start.col_offset, last.end_lineno, last.end_col_offset, scope, text, wanted]
        )

    def _flag_test(self, test: ast.expr, scope: str) -> bool:
        """Does the test read a constexpr flag of the kernel it lies in (`if ptx_pack:`, `if not USE_TMA:`), or
        compare one with a constant (`if SPLIT_K == 1:`)?"""
        node = _tested(test)
        return isinstance(node, ast.Name) and node.id in self.flags.get(scope, ())

    def _calls_predicate(self, test: ast.expr) -> bool:
        """Does the test call a function of this module whose body reads the platform (flag_gems's
        `if streamk_scenario(a, b, M, N, K):`, true only for capability 8)?"""
        return any(map(self._calls_own_predicate, _nodes(test)))  # a Call is never one of the leaves _nodes skips

    def _walk(self, tree: ast.Module, bindings: list[tuple[int, int, list[str]]]) -> None:
        """Expression-level guards (if/while bodies, `a if t else b`, `t and x`, comprehension filters), the
        references the call-site analysis needs and whether a convolution is named, in one pass over every node."""
        scopes = sorted(((v[0], v[1], k) for k, v in self.facts["scopes"].items() if v[2] == "def"), key=lambda s: s[0])
        attribute_bases: set[int] = set()
        names: list[ast.Name | ast.Attribute] = []
        calls: dict[int, ast.Call] = {}
        typing: list[ast.expr] = []  # annotations and isinstance types: a reference there constructs nothing
        convolves = False
        filled: set[str] = set()
        for node in _nodes(tree):
            kind = type(node)
            if kind is ast.Name:
                names.append(node)
                convolves = convolves or node.id in _CONVOLUTIONS
            elif kind is ast.Attribute:
                attribute_bases.add(id(node.value))
                if isinstance(node.ctx, ast.Store) and not (
                    isinstance(node.value, ast.Name) and node.value.id == "self"
                ):
                    self._field_stored(node.attr)
                convolves = convolves or node.attr in _CONVOLUTIONS
                if isinstance(node.value, ast.Name):
                    names.append(node)
                elif _is_torch_ops(node.value):  # `torch.ops.ns.name`: a call of the function registered as it
                    self.facts["op_uses"].append([node.lineno, node.col_offset, f"{node.value.attr}::{node.attr}"])
            elif kind is ast.Call:
                func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
                calls[id(func)] = node
                self._call_stores(node)
                _add_filled(filled, node)
                if node.keywords:
                    self._switches(node, scopes)
                if last_name(func) in ("isinstance", "issubclass") and len(node.args) == 2:
                    typing.append(node.args[1])
            elif kind is ast.arg or kind is ast.AnnAssign:
                if node.annotation is not None:
                    typing.append(node.annotation)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                if node.returns is not None:
                    typing.append(node.returns)
            elif kind in (ast.If, ast.While, ast.IfExp):
                self._branches(node, _scope_at(scopes, node.lineno))
            elif kind is ast.BoolOp:
                self._boolop(node, _scope_at(scopes, node.lineno))
            elif kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
                self._comprehension(node, _scope_at(scopes, node.lineno))
            elif kind in (ast.Subscript, ast.AugAssign):
                _add_filled(filled, node)
        self._references(names, attribute_bases, calls, {id(n) for root in typing for n in _nodes(root)})
        # a module-level literal changed in place (`_MODES[name] = fn` in a register function) holds more than it shows
        self.facts["filled"] = sorted(filled & set(self.facts["defs"]))
        self._binding_uses(bindings, names)
        self.facts["convolves"] = convolves

    def _binding_uses(self, bindings: list[tuple[int, int, list[str]]], names: list[ast.Name | ast.Attribute]) -> None:
        """Where the module reads each name a top-level import or assignment binds (`binds`: [first line, last line,
        names, [[line, column], ...]]): the statement matters on the target only where one of those reads runs
        (freetoken's `from triton.language.extra.cuda import gdc_wait`, called only under a PDL constexpr False on
        ROCm). Names read often, or never in the module, are left out: a reader elsewhere is not seen here."""
        if not bindings:
            return
        wanted = {name for _first, _last, bound in bindings for name in bound}
        reads: dict[str, list[list[int]]] = {}
        for node in names:
            if type(node) is ast.Name and node.id in wanted and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, []).append([node.lineno, node.col_offset])
        for first, last, bound in bindings:
            uses = [use for name in bound for use in reads.get(name, ()) if not first <= use[0] <= last]
            if 0 < len(uses) <= MAX_BINDING_USES and all(name in reads for name in bound):
                self.facts["binds"].append([first, last, bound, uses])

    def _field_stored(self, name: str) -> None:
        if name not in self.facts["fields"]:
            self.facts["fields"].append(name)

    def _call_stores(self, call: ast.Call) -> None:
        """Fields a call sets in an object it is given: `dataclasses.replace(args, f=x)`, `setattr(args, "f", x)`,
        `object.__setattr__(self, "f", x)`."""
        called = last_name(call.func)
        if called == "replace" and call.args:
            for keyword in call.keywords:
                if keyword.arg:
                    self._field_stored(keyword.arg)
        elif called in ("setattr", "__setattr__"):  # `object.__setattr__(self, "f", v)` of a frozen dataclass too
            for name in call.args[:2]:  # `setattr(o, "f", v)`, `o.__setattr__("f", v)`
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    self._field_stored(name.value)

    def _switches(self, call: ast.Call, scopes: list[tuple[int, int, str]]) -> None:
        """Keywords whose value may be off on the target: a platform value or a flag of the enclosing kernel."""
        scope = ""
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg is None or not isinstance(value, (ast.Name, ast.Attribute, ast.Call)):
                continue
            scope = scope or _scope_at(scopes, call.lineno)
            text = self._text(value)
            if text and (is_platform_text(text) or self._flag_test(value, scope) or _reads_switch(value)):
                self.facts["switches"].append(
                    [keyword.lineno, keyword.col_offset, keyword.end_lineno, keyword.end_col_offset, scope, text]
                )

    def _branches(self, node: ast.If | ast.While | ast.IfExp, scope: str) -> None:
        body = node.body if isinstance(node.body, list) else [node.body]
        regions = len(self.facts["regions"])
        self._region(body[0], body[-1], scope, node.test, True)
        if isinstance(node, ast.If) and not node.orelse and len(self.facts["regions"]) > regions:
            if self._replaces(node, scope):
                self.facts["replacing"].append([body[0].lineno, body[0].col_offset])
        orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
        if orelse:
            self._region(orelse[0], orelse[-1], scope, node.test, False)

    def _replaces(self, node: ast.If, scope: str) -> bool:
        """Does an `if` body without else return, or rebind a name its function stored before the `if`
        (`x = slow(a)` then `if FAST: x = fast(a)`): the option picks between two ways, it adds no step? A
        parameter or local the body transforms (`if STOCHASTIC: x = _rounding(x)`, hip-attn's
        `if LOGIT_SOFTCAP is not None: qk = tanh(qk / LOGIT_SOFTCAP) * LOGIT_SOFTCAP`, `acc += bias`) is a step."""
        function = self.defs.get(scope)
        if function is None:
            return False
        before = {
            n.id
            for n in _nodes(function)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < node.lineno
        }
        inside = [n for statement in node.body for n in _nodes(statement)]
        transformed = {id(target) for n in inside for target in _transformed_targets(n)}
        return any(
            isinstance(n, ast.Return)
            or isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)
            and n.id in before
            and id(n) not in transformed
            for n in inside
        )

    def _boolop(self, node: ast.BoolOp, scope: str) -> None:
        wanted = isinstance(node.op, ast.And)  # `a and b`: b runs when a holds; `a or b`: when it fails
        for before, after in zip(node.values, node.values[1:]):
            self._region(after, node.values[-1], scope, before, wanted)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: str) -> None:
        element = node.key if isinstance(node, ast.DictComp) else node.elt
        last = node.value if isinstance(node, ast.DictComp) else node.elt
        for generator in node.generators:
            for test in generator.ifs:
                self._region(element, last, scope, test, True)

    def _references(
        self,
        names: list[ast.Name | ast.Attribute],
        attribute_bases: set[int],
        calls: dict[int, ast.Call],
        type_uses: set[int],
    ) -> None:
        """Uses of module-level functions and of names imported from the project itself; one that only names a
        type (`args: Optional[Args]`, `isinstance(x, Args)`) is marked, a use that may construct it is not."""
        kinds = {name: self.facts["scopes"].get(name, [0, 0, ""])[2] for name in self.facts["defs"]}
        own = {name for name, kind in kinds.items() if kind == "def"}
        # a module-level class is used by name, mostly as an attribute's base (`_AtomicBackward.apply(q, k)`)
        classes = {name for name, kind in kinds.items() if kind == "class"}
        imports = self.facts["imports"]
        project = {local for local, qualified in imports.items() if qualified.split(".", 1)[0] in self.top}
        refs = self.facts["refs"]
        for node in names:
            if isinstance(node, ast.Attribute):
                if not isinstance(node.value, ast.Name):  # never: only attributes of a plain name are collected
                    continue
                base = node.value.id
                if base not in project or not isinstance(node.ctx, ast.Load):  # `mod.helper(...)`, `mod.kernel`
                    continue
                key = f"{base}.{node.attr}"
            else:
                if not isinstance(node.ctx, ast.Load) or id(node) in attribute_bases and node.id not in classes:
                    continue
                if node.id not in own and node.id not in project and node.id not in classes:
                    continue
                key = node.id
            if self.dead and any(first <= node.lineno <= last for first, last in self.dead):
                continue  # after a `raise` (hip-attn's launch left below `raise NotImplementedError()`)
            call = calls.get(id(node))
            keywords: dict[str, str | int] = {TYPE_USE: 1} if id(node) in type_uses else {}
            if call is not None:
                keywords = {k.arg: self._keyword_value(k) for k in call.keywords if k.arg}
                spreads = [k.value for k in call.keywords if k.arg is None]
                starred = any(isinstance(a, ast.Starred) for a in call.args)
                keywords[POSITIONAL] = -1 if starred else len(call.args)  # which parameters the call may fill
                if not starred:
                    keywords.update(self._positional_values(call.args))
                else:  # positions are lost: an argument named like a parameter is kept under that name
                    keywords.update(self._named_positionals(call.args))
                for index, spread in enumerate(spreads):  # launch keywords a helper builds: evaluated per parameter
                    keywords[SPREAD if index == 0 else f"{SPREAD}{index}"] = self._spread_text(spread)
                    self._keep_builder(spread)
            refs.setdefault(key, []).append([node.lineno, node.col_offset, keywords])


_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAVES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.Constant)
# field value type -> is it a node _nodes descends into (an isinstance per value cost a third of the walk)
_WALKED_TYPES: dict[type, bool] = {}


def _walked(value_type: type) -> bool:
    walked = _WALKED_TYPES[value_type] = issubclass(value_type, ast.AST) and not issubclass(value_type, _LEAVES)
    return walked  # by type alone: none of these classes overrides isinstance


def _changed_in_place(node: ast.AST) -> ast.expr | None:
    """What the node changes in place: `d` of `d[k] = v`, `del d[k]`, `d.update(...)` (a mapping mutator) or
    `d |= ...`; None for anything else."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MAPPING_MUTATORS:
        return node.func.value
    if isinstance(node, ast.AugAssign):
        return node.target
    return None


def _add_filled(filled: set[str], node: ast.AST) -> None:
    """Add the name the node changes in place, a mapping's way (_changed_in_place) or a list's or a set's."""
    base = _changed_in_place(node)
    if base is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = node.func.value if node.func.attr in _CONTAINER_MUTATORS else None
    if isinstance(base, ast.Name):
        filled.add(base.id)


def _tests_truth_of(test: ast.expr, name: str) -> bool:
    """`name`, or `name and ...`: the test holds only where `name` is truthy."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_truth_of(value, name) for value in test.values)
    return isinstance(test, ast.Name) and test.id == name


def _changed_anywhere(function: ast.AST, name: str) -> bool:
    """Does the function change `name` in place (`kwargs["STOCHASTIC"] = True`, `kwargs.update(...)`) or rebind it?"""
    for node in _nodes(function):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        base = _changed_in_place(node)
        if isinstance(base, ast.Name) and base.id == name:
            return True
    return False


def _transformed_targets(node: ast.AST) -> list[ast.Name]:
    """The names a statement rebinds from their own value: `x += y`, `x = f(x)` (a step applied to x, not another
    way of computing it)."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return [node.target]
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
        return []
    read = {n.id for n in _nodes(node.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t for t in targets if isinstance(t, ast.Name) and t.id in read]


def _nodes(tree: ast.AST):
    """Every node (like ast.walk, without its per-node generator overhead; operator and context leaves skipped)."""
    stack = [tree]
    pop, push, fields_of, walked_types = stack.pop, stack.append, _FIELDS, _WALKED_TYPES
    while stack:
        node = pop()
        yield node
        kind = type(node)
        names = fields_of.get(kind)
        if names is None:
            names = fields_of[kind] = tuple(node._fields)
        for name in names:
            value: Any = getattr(node, name, None)  # a node, a list of them, or a plain value
            value_type = type(value)
            if value_type is list:
                for item in value:
                    item_type = type(item)
                    walked = walked_types.get(item_type)
                    if walked if walked is not None else _walked(item_type):
                        push(item)
            else:
                walked = walked_types.get(value_type)
                if walked if walked is not None else _walked(value_type):
                    push(value)


def _scope_at(scopes: list[tuple[int, int, str]], line: int) -> str:
    """The innermost def whose lines hold `line` ("" at module level)."""
    for _, end, qualname in reversed(scopes[: bisect_right(scopes, line, key=_start)]):
        if line <= end:
            return qualname  # the latest start holding the line nests deepest
    return ""


def _start(scope: tuple[int, int, str]) -> int:
    return scope[0]


def _class_switch(statement: ast.stmt) -> ast.expr | None:
    """A class-level `default_enable = <test>` (or `ENABLED: ClassVar[bool] = <test>`): whether the class is used.
    An annotated field of an instance (a dataclass's `enabled: bool = HAS_TMA`) is a setting, not a switch.
    Its value (the test), or None."""
    if isinstance(statement, ast.Assign):
        targets, value = statement.targets, statement.value
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None and "ClassVar" in ast.dump(statement):
        targets, value = [statement.target], statement.value
    else:
        return None
    return value if any(isinstance(t, ast.Name) and _ENABLE_ATTRIBUTE.search(t.id) for t in targets) else None


_CUSTOM_OP_DECORATORS = ("triton_op", "custom_op")  # torch.library's: the function becomes torch.ops.<ns>.<name>


def _custom_op_name(decorator: ast.expr) -> str | None:
    """`@triton_op("ns::name", ...)` / `@torch.library.custom_op("ns::name", ...)` -> "ns::name"."""
    if not isinstance(decorator, ast.Call) or last_name(decorator.func) not in _CUSTOM_OP_DECORATORS:
        return None
    first = decorator.args[0] if decorator.args else _keyword(decorator, "name")
    name = first.value if isinstance(first, ast.Constant) else None
    return name if isinstance(name, str) and name.count("::") == 1 else None


def _is_torch_ops(node: ast.expr) -> bool:
    """`torch.ops.<ns>` (the namespace of torch custom ops)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "ops"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "torch"
    )


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr | None, int]]:
    """(parameter, default or None, position) of each named parameter; keyword-only ones at KEYWORD_ONLY."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return [
        *((arg, default, index) for index, (arg, default) in enumerate(zip(positional, defaults))),
        *((arg, default, KEYWORD_ONLY) for arg, default in zip(args.kwonlyargs, args.kw_defaults)),
    ]


def _annotated_class(annotation: ast.expr | None) -> str | None:
    """The class an annotation names: `Args`, `"Args"`, `Optional[Args]`, `Args | None`; None otherwise."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
        return text if text.isidentifier() else None
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Subscript) and last_name(annotation.value) == "Optional":
        return _annotated_class(annotation.slice)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        if isinstance(annotation.right, ast.Constant) and annotation.right.value is None:
            return _annotated_class(annotation.left)
    return None


def _factory(value: ast.expr) -> bool:
    """`field(default_factory=...)` and the like: a default built by a call, not a plain value."""
    return isinstance(value, ast.Call)


def _own_stores(node: ast.ClassDef, fields: list[str], text) -> dict[str, list[str]]:
    """{field: [sources]} of what the record's own methods store in its fields (`self.logit_softcap = None` in
    `__post_init__`); an augmented or unpacking store reads as runtime data (''), and so does a value reading a
    parameter or local of the method (`self.use_pdl = use_pdl`): the source is evaluated in the class's scope."""
    stores: dict[str, list[str]] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        own = _bound_in(method)
        for statement in _nodes(method):
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
                targets, value = [statement.target], None
            else:
                continue
            unpacked = [e for t in targets if isinstance(t, (ast.Tuple, ast.List)) for e in t.elts]
            if unpacked:
                targets, value = unpacked, None
            if value is not None and any(isinstance(n, ast.Name) and n.id in own for n in _nodes(value)):
                value = None
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                    and target.attr in fields
                ):
                    stores.setdefault(target.attr, []).append(text(value) if value is not None else "")
    return stores


def _bound_in(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function binds: its parameters and the names it stores."""
    every = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    every += [a for a in (function.args.vararg, function.args.kwarg) if a is not None]
    bound = {arg.arg for arg in every}
    bound.update(n.id for n in _nodes(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    return bound


def _is_option_default(default: ast.expr | None) -> TypeGuard[ast.Constant]:
    """A default that makes a parameter an option: False / True / None or a string (`backend="triton"`)."""
    return isinstance(default, ast.Constant) and (default.value is None or isinstance(default.value, (bool, str)))


def _plain_param(declared: list | None) -> bool:
    """Is a parameter free of what decides it otherwise: a kernel's constexpr (its launches), a platform default?"""
    return declared is None or (len(declared) == 3 and not declared[2])


def _is_main_block(statement: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either order): the module's self-test, run only as a script."""
    test = statement.test if isinstance(statement, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, *test.comparators]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in sides
    )


def _tested(test: ast.expr, none_only: bool = False) -> ast.expr:
    """What a test reads: `x` of `not x` and of `x == 1` (with `none_only`, of `x is None` only), else the test."""
    node = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant):
        return node.left if not none_only or node.comparators[0].value is None else node
    return node


def _spread_names(text: str) -> set[str]:
    """Names spread into a call or a dict (`f(**kw)`, `dict(a=1, **kw)`), not raised to a power (`x**n`, `x ** n`)."""
    return {m.group(1) for m in _SPREAD_NAME.finditer(text) if _char_before(text, m.start()) in ("(", ",")}


def _char_before(text: str, index: int) -> str:
    """The last character before `index` that is not whitespace ('' at the start)."""
    index -= 1
    while index >= 0 and text[index].isspace():
        index -= 1
    return text[index] if index >= 0 else ""


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _code_lines(snippet: str) -> int:
    """How many lines of a snippet hold code (comment-only and blank lines left out)."""
    return sum(1 for line in snippet.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def _is_constexpr(annotation: ast.expr) -> bool:
    """`tl.constexpr`, `triton.language.constexpr`, `constexpr` (a Triton compile-time parameter)."""
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "constexpr"
    return isinstance(annotation, ast.Name) and annotation.id == "constexpr"


def _import_probe_exits(statement: ast.Try) -> bool:
    """`try: import x` whose every handler exits (lmdeploy's `except ImportError: return False`)."""
    return bool(statement.handlers) and all(_ends_in_exit(h.body) for h in statement.handlers)


def _absolute_imports(body: list[ast.stmt]) -> list[str]:
    return [name for name, _line in _unconditional_imports(body)]


def _ends_in_exit(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], _EXITS)


def _platform_defaults(body: list[ast.stmt], defaults: dict[str, ast.expr], text) -> dict[str, tuple[str, list[str]]]:
    """Parameters defaulting to None that the function replaces, when None, with a platform-decided value
    (fbgemm's `elif no_use_persistent is None: if torch.version.hip is not None: no_use_persistent = True
    else: no_use_persistent = False`): the package's own default path is that value. Earlier branches of the
    same if/elif chain testing another parameter (`if use_persistent: no_use_persistent = False`) are kept as
    overrides: a project call passing that parameter leaves the value undecided. `defaults`: parameter -> its
    default, for the parameters that have one."""
    nones = {name for name, default in defaults.items() if isinstance(default, ast.Constant) and default.value is None}
    found: dict[str, tuple[str, list[str]]] = {}
    for statement in body:
        tests: list[ast.expr] = []
        branch: ast.stmt | None = statement
        while isinstance(branch, ast.If):
            name = _is_none_test(branch.test)
            if name in nones and name not in found:
                value = _platform_choice(branch.body, name, text)
                if value is not None:
                    overrides = [t.id for t in tests if isinstance(t, ast.Name) and t.id in defaults]
                    if len(overrides) == len(tests):  # an earlier test on anything else: not the default path
                        found[name] = (value, overrides)
            tests.append(branch.test)
            branch = branch.orelse[0] if len(branch.orelse) == 1 else None
    return found


def _is_none_test(test: ast.expr) -> str | None:
    """`x is None` -> "x"."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _platform_choice(body: list[ast.stmt], name: str, text) -> str | None:
    """The source of what `body` sets `name` to, when a platform test picks it: `if T: name = A else: name = B`
    -> `((A) if (T) else (B))`, or `name = <platform expression>`."""
    if len(body) != 1:
        return None
    statement = body[0]
    if isinstance(statement, ast.If) and is_platform_text(text(statement.test)):
        chosen = _assigned(statement.body, name, text), _assigned(statement.orelse, name, text)
        if chosen[0] and chosen[1]:
            return f"(({chosen[0]}) if ({text(statement.test)}) else ({chosen[1]}))"
        return None
    value = _assigned(body, name, text)
    return value if value and is_platform_text(value) else None


def _assigned(body: list[ast.stmt], name: str, text) -> str | None:
    if len(body) == 1 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1:
        target = body[0].targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return text(body[0].value) or None
    return None


_UNKNOWN: Any = object()  # a config value the list's source does not decide
MAX_CONFIG_DEPTH = 6


_KERNEL_DECORATORS = ("jit", "autotune", "heuristics")  # a Triton kernel or device function: launched or called
# from other kernels, never run on its own


def _returns_value(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does the function (not the functions nested in it) return a value: a Triton device function, not a kernel?"""
    stack: list[ast.AST] = list(node.body)
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Return) and current.value is not None:
            return True
        if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(current))
    return False


def _calls_platform_named(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does the function call a plain-named platform predicate (`return is_sm90_supported()`, imported from the
    package's arch module)? Its name (`_pdl_supported`) and text need not say so: its value is that predicate's."""
    return any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and _PLATFORM_WORD.search(call.func.id)
        for call in _nodes(node)  # a Call is never one of the leaves _nodes skips
    )


def _called(decorator: ast.expr) -> ast.expr:
    """`@triton.jit(do_not_specialize=...)` -> `triton.jit`."""
    return decorator.func if isinstance(decorator, ast.Call) else decorator


# exceptions raised when a command-line tool is missing or fails (subprocess on a machine without the tool): a
# handler naming one of them (or a bare except) is what runs there
MISSING_COMMAND_ERRORS = frozenset(
    {
        "FileNotFoundError", "OSError", "IOError", "EnvironmentError", "CalledProcessError", "SubprocessError",
        "Exception", "BaseException",
    }
)  # fmt: skip


def last_name(node: ast.expr) -> str:
    """`triton.autotune` -> "autotune"; `Config` -> "Config"."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _literal_values(node: ast.expr) -> list[Any] | None:
    """The constants a literal list or tuple holds (tuples of constants too), else None."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    values: list[Any] = []
    for element in node.elts:
        if isinstance(element, ast.Constant):
            values.append(element.value)
        elif isinstance(element, ast.Tuple) and all(isinstance(e, ast.Constant) for e in element.elts):
            values.append(tuple(e.value for e in element.elts if isinstance(e, ast.Constant)))
        else:
            return None
    return values


class _ConfigList:
    """The configs an autotune list holds, read from its source: each config as {key: possible values} (None for
    a config whose keys are not written out), or None for a list built some other way. Literal lists, `+`, module
    names, comprehensions and functions that append configs in loops over literal lists (`for split_k in []:`
    appends nothing) are read; loop variables take the literal's values, anything else is _UNKNOWN."""

    def __init__(self, bindings: dict[str, ast.AST]) -> None:
        self.bindings = bindings
        self.depth = 0

    def values(self, node: ast.AST, env: dict[str, Any] | None = None) -> list[dict[str, Any] | None] | None:
        if self.depth > MAX_CONFIG_DEPTH:
            return None
        self.depth += 1
        try:
            return self._values(node, env or {})
        finally:
            self.depth -= 1

    def _values(self, node: ast.AST, env: dict[str, Any]) -> list[dict[str, Any] | None] | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[dict[str, Any] | None] = []
            for element in node.elts:
                found = self.values(element.value if isinstance(element, ast.Starred) else element, env)
                if found is None:
                    return None
                out.extend(found)
            return out
        if isinstance(node, ast.Call) and last_name(node.func) == "Config":
            return [self._config(node, env)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.values(node.left, env), self.values(node.right, env)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.IfExp):
            body, orelse = self.values(node.body, env), self.values(node.orelse, env)
            return None if body is None or orelse is None else body + orelse
        if isinstance(node, ast.Name) and node.id in self.bindings:
            bound = self.bindings[node.id]
            return None if isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef)) else self.values(bound)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            function = self.bindings.get(node.func.id)
            return self._function(function) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self._comprehension(node, env)
        return None

    def _config(self, call: ast.Call, env: dict[str, Any]) -> dict[str, Any] | None:
        kwargs = call.args[0] if call.args else _keyword(call, "kwargs")
        if not isinstance(kwargs, ast.Dict):
            return None
        config: dict[str, Any] = {}
        for key, value in zip(kwargs.keys, kwargs.values):
            if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
                return None  # `**base`: keys not written out
            if isinstance(value, ast.Constant):
                config[key.value] = (value.value,)
            elif isinstance(value, ast.Name) and isinstance(env.get(value.id), tuple):
                config[key.value] = env[value.id]
            else:
                config[key.value] = _UNKNOWN
        return config

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp, env: dict[str, Any]):
        inner = dict(env)
        for generator in node.generators:
            if not self._bind_loop(generator.target, generator.iter, inner):
                return []  # a loop over an empty literal: nothing
        return self.values(node.elt, inner)

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, env: dict[str, Any]) -> bool:
        """Bind a loop's variables to the values of a literal it iterates, written there or bound to a name in the
        function or the module (`split_k_range = [1]`); False when the literal is empty."""
        if isinstance(iterable, ast.Name):
            bound = env.get(_LITERAL + iterable.id, self.bindings.get(iterable.id))
            iterable = bound if isinstance(bound, ast.expr) else iterable
        values = _literal_values(iterable)
        if values is not None and not values:
            return False
        names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", ()))
        for index, name in enumerate(names):
            if not isinstance(name, ast.Name):
                continue
            if values is None:
                env[name.id] = _UNKNOWN
            elif isinstance(target, ast.Name):
                env[name.id] = tuple(dict.fromkeys(values))
            elif all(isinstance(v, tuple) and len(v) == len(names) for v in values):
                env[name.id] = tuple(dict.fromkeys(v[index] for v in values))
            else:
                env[name.id] = _UNKNOWN
        return True

    def _function(self, definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, Any] | None] | None:
        """Every config a function builds (appended, extended, assigned or returned); None when one may come
        another way. Configs under a loop over an empty literal are never built (`for split_k in []:`)."""
        found: list[dict[str, Any] | None] = []
        return found if self._statements(definition.body, {}, found) else None

    def _statements(self, body: list[ast.stmt], env: dict[str, Any], found: list) -> bool:
        for statement in body:
            if isinstance(statement, ast.For):
                inner = dict(env)
                if self._bind_loop(statement.target, statement.iter, inner) and not self._statements(
                    statement.body, inner, found
                ):
                    return False
            elif isinstance(statement, (ast.If, ast.While, ast.With, ast.Try)):
                blocks = [getattr(statement, name, []) for name in _BLOCK_FIELDS]
                blocks += [h.body for h in getattr(statement, "handlers", ())]
                if not all(self._statements(block, env, found) for block in blocks):
                    return False
            elif _literal_binding(statement):
                env[_LITERAL + statement.targets[0].id] = statement.value  # type: ignore[attr-defined]
            else:
                added = self._added(statement, env)
                if added is None:
                    return False
                found.extend(added)
        return True

    def _added(self, statement: ast.stmt, env: dict[str, Any]) -> list[dict[str, Any] | None] | None:
        """The configs one statement adds ([] for a statement that builds none), or None when it cannot tell."""
        value: ast.expr | None = None
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call, method = statement.value, last_name(statement.value.func)
            if method in ("append", "extend") and len(call.args) == 1:
                value = ast.List(elts=[call.args[0]], ctx=ast.Load()) if method == "append" else call.args[0]
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
            value = statement.value
        elif isinstance(statement, (ast.Assign, ast.Return)) and statement.value is not None:
            builds = isinstance(statement.value, (ast.List, ast.ListComp)) or _builds_config(statement.value)
            if isinstance(statement.value, ast.Name) or not builds:
                return []  # `return configs` (the list built above), or an ordinary local (`num_warps = 2`)
            value = statement.value
        if value is None:
            return None if _builds_config(statement) else []
        return self.values(value, env)


_LITERAL = "[]"  # env key prefix: a function-local name bound to a literal list (what loops iterate)


def _literal_binding(statement: ast.stmt) -> bool:
    """`name = [1, 2]`: a local bound to a literal list or tuple of constants."""
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and _literal_values(statement.value) is not None
    )


def _builds_config(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and last_name(n.func) == "Config" for n in ast.walk(node))
