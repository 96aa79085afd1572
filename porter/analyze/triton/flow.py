"""Value flow of launch and config values through the project's own helpers.

NVIDIA-first code computes num_warps, num_stages and BLOCK_* rather than writing them at the launch:
`BLOCK_SIZE, num_warps = calculate_settings(n)` with `num_warps = 32` in a branch of a helper in
another module. The folder (fold.py) follows locals, branches, clamps and tuples; this module follows
calls: a call of a function defined in this module or in a module of the scanned project is folded
through every `return` of the function, its parameters bound to the folded arguments (unknown ones
stay unknown, so `min(32, n // 512)` is the interval ..32).

A value that comes from another module carries that module's inventory (`Possible.module`). The
finding belongs at the origin, the line a port changes: the helper's module reports it, naming the
launches it reaches (`caller_sites`), and the launching module stays quiet about it, unless the
helper's module is not part of the scan.

`set_project(root, files)` says which tree is scanned (porter.analyze.scan calls it); without it
modules resolve inside the package around the file and no caller search runs.

`origin_of(root, path, line, param)` maps a launch site to the origins of one of its values, for
runtime findings that know only the launch (`data["launch"] = "path:line"`).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import libcst as cst

from porter.analyze.project_facts import parse_or_none
from porter.analyze.triton.fold import UNKNOWN, Possible, Range, Val, lower, upper

MAX_CALL_DEPTH = 6
FOREIGN_MODULES_KEPT = 48  # parsed helper/caller modules kept per process
LAUNCH_WORDS = ("num_warps", "num_stages", "waves_per_eu", "BLOCK")


@dataclass
class Project:
    root: Path
    files: dict[str, Path]  # scanned files: POSIX path relative to root -> absolute path
    _imports: dict[str, list[str]] | None = field(default=None, repr=False)
    _may_set: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False)  # (file, key) -> see _may_set

    def relative(self, absolute: Path) -> str | None:
        try:
            rel = absolute.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None
        return rel if rel in self.files else None


_PROJECT: Project | None = None
_LOADED: OrderedDict[str, Any] = OrderedDict()  # absolute path -> TritonInventory (None: unreadable)
_CURRENT: dict[str, Any] = {}  # absolute path -> the inventory of the module being analysed now
_ACTIVE: set[tuple] = set()


def set_project(root: str | Path | None, files: list[str] | None = None) -> None:
    """Declare the scanned tree (files: POSIX paths relative to root; None: every .py under root)."""
    global _PROJECT
    _LOADED.clear()
    _CURRENT.clear()
    if root is None:
        _PROJECT = None
        return
    base = Path(root).resolve()
    if base.is_file():
        base = base.parent
    if files is None:
        files = [p.relative_to(base).as_posix() for p in base.rglob("*.py")]
    _PROJECT = Project(base, {f: base / f for f in files if f.endswith(".py")})


def project() -> Project | None:
    return _PROJECT


# ---- modules ------------------------------------------------------------------------------------


def absolute_path(inv) -> Path | None:
    path = Path(inv.path)
    if _PROJECT is not None and not path.is_absolute():
        candidate = _PROJECT.root / path
        return candidate if candidate.is_file() else None
    return path.resolve() if path.is_file() else None


def register_current(inv) -> None:
    """The module being analysed resolves to this very inventory (its nodes are the findings' nodes)."""
    if _PROJECT is None:
        return
    path = absolute_path(inv)
    if path is not None:
        key = str(path.resolve())
        if _LOADED.pop(key, None) is not None:
            # parsed before as a helper module: the caller sites cached since may point at that copy.
            # They are the only flow cache on an inventory, so the parsed modules stay (re-parsing them
            # all was most of a cold scan's time).
            for other in _LOADED.values():
                if other is not None:
                    other.__dict__.pop("_caller_sites", None)
        _CURRENT.clear()
        _CURRENT[key] = inv


def parsed_module(path: str, text: str) -> cst.Module | None:
    """The libcst module value flow already parsed for this scanned file (as a helper or caller of an
    earlier module), when it was parsed from this very text: the engine analysing the file reuses it
    instead of parsing again. libcst trees are immutable, and register_current drops that copy's
    inventory once the file's own is built, so no cache keeps the two apart."""
    if _PROJECT is None:
        return None
    inv = _LOADED.get(str((_PROJECT.root / path).resolve()))
    if inv is None or inv._ctx.text != text:
        return None
    return inv.module


def load(path: Path) -> Any:
    """The TritonInventory of a project file, parsed once per process (a few dozen kept)."""
    key = str(path.resolve())
    if key in _CURRENT:
        return _CURRENT[key]
    if key in _LOADED:
        _LOADED.move_to_end(key)
        return _LOADED[key]
    inv = None
    try:
        text = path.read_text(encoding="utf-8")
        from porter.analyze.triton import inventory_for_source

        shown = _PROJECT.relative(path) if _PROJECT is not None else None
        inv = inventory_for_source(text, shown or str(path))
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, ValueError):
        inv = None
    _LOADED[key] = inv
    while len(_LOADED) > FOREIGN_MODULES_KEPT:
        _LOADED.popitem(last=False)
    return inv


def _search_bases(inv) -> list[Path]:
    """Directories a dotted module name may start from: the project root (and its src/), and the
    parent of the outermost package around the file."""
    bases: list[Path] = []
    if _PROJECT is not None:
        bases += [_PROJECT.root, _PROJECT.root / "src"]
    path = absolute_path(inv)
    if path is not None:
        top = path.parent
        while (top / "__init__.py").is_file() and (top.parent / "__init__.py").is_file():
            top = top.parent
        bases.append(top.parent if (top / "__init__.py").is_file() else top)
    return bases


def module_file(inv, dotted: str) -> Path | None:
    parts = dotted.split(".")
    for base in _search_bases(inv):
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if candidate.is_file() and _inside_project(candidate):
                return candidate
    return None


def _inside_project(path: Path) -> bool:
    if _PROJECT is None:
        return True
    try:
        path.resolve().relative_to(_PROJECT.root)
        return True
    except ValueError:
        return False


def _relative_module(inv, node: cst.ImportFrom) -> Path | None:
    """The file a `from .utils import x` names, relative to this module's file."""
    path = absolute_path(inv)
    if path is None:
        return None
    base = path.parent
    for _ in range(len(node.relative) - 1):
        base = base.parent
    if node.module is None:
        return base / "__init__.py" if (base / "__init__.py").is_file() else None
    parts = inv.code(node.module).split(".")
    for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def _imported_from(inv, local: str) -> tuple[Path, str] | None:
    """(file, name there) of a name this module imports from a project module."""
    for node in inv.nodes(cst.ImportFrom):
        if isinstance(node.names, cst.ImportStar):
            continue
        for alias in node.names:
            bound = alias.asname.name if alias.asname else alias.name
            if not isinstance(bound, cst.Name) or bound.value != local or not isinstance(alias.name, cst.Name):
                continue
            if node.relative:
                file = _relative_module(inv, node)
            elif node.module is not None:
                file = module_file(inv, inv.code(node.module))
            else:
                file = None
            return (file, alias.name.value) if file is not None else None
    return None


def resolve_function(inv, func: cst.BaseExpression, depth: int = 0) -> tuple[Any, cst.FunctionDef] | None:
    """The (inventory, FunctionDef) a call's callee names: a module-level function here, or one a
    project module defines (re-exports followed)."""
    if depth > 3:
        return None
    if isinstance(func, cst.Name):
        local = inv.module_function(func.value)
        if local is not None:
            return inv, local
        found = _imported_from(inv, func.value)
        if found is None:
            return None
        other = load(found[0])
        if other is None:
            return None
        return resolve_function(other, cst.Name(found[1]), depth + 1)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        for qualified in inv.qnames(func.value):  # `import pkg.utils as u; u.settings(n)`
            file = module_file(inv, qualified)
            if file is not None:
                other = load(file)
                return None if other is None else resolve_function(other, cst.Name(func.attr.value), depth + 1)
    return None


# ---- folding calls ------------------------------------------------------------------------------


def fold_call(inv, call: cst.Call, env: dict[str, Val], index: int | None) -> Val | None:
    """The call's value (element `index` of it) over every return of the helper it names; None when
    the callee is not a project function."""
    target = resolve_function(inv, call.func)
    if target is None:
        return None
    callee, function = target
    key = (id(function), index)
    if key in _ACTIVE or len(_ACTIVE) >= MAX_CALL_DEPTH:
        return UNKNOWN
    returns = [node.value for node in _own_returns(function.body)]
    if not returns or any(value is None for value in returns):
        return UNKNOWN
    _ACTIVE.add(key)
    try:
        inner = bind_arguments(inv, callee, function, call, env)
        parts = [
            callee.fold(value, inner) if index is None else callee.fold_item(value, index, inner) for value in returns
        ]
    finally:
        _ACTIVE.discard(key)
    known = [part for part in parts if part.known]
    if not known:
        return UNKNOWN
    via = inv.code(call).strip()
    foreign = callee if callee is not inv else None
    partial = len(known) < len(parts) or any(part.partial for part in known)
    return Val([replace(p, module=p.module or foreign, via=via) for part in known for p in part.possibles], partial)


def _own_returns(body) -> Iterator[cst.Return]:
    """`return` statements of a function body, nested functions, classes and lambdas left out."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return):
            yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, (cst.BaseExpression,)):
            continue  # expressions hold no statements
        stack.extend(reversed(node.children))


def bind_arguments(inv, callee, function: cst.FunctionDef, call: cst.Call, env: dict[str, Val]) -> dict[str, Val]:
    """Parameters bound to the call's folded arguments (folded where the call is), defaults folded where
    the function is; parameters left unbound stay unknown."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    bound: dict[str, Val] = {p.name.value: UNKNOWN for p in [*positional, *params.kwonly_params]}
    if any(arg.star for arg in call.args):
        return bound
    for param, arg in zip(positional, [a for a in call.args if a.keyword is None]):
        bound[param.name.value] = inv.fold(arg.value, env)
    passed = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = inv.fold(arg.value, env)
    given = len([a for a in call.args if a.keyword is None])
    for i, param in enumerate([*positional, *params.kwonly_params]):
        name = param.name.value
        if param.default is not None and name not in passed and (i >= given or param in params.kwonly_params):
            bound[name] = callee.fold(param.default)
    return bound


# ---- callers in other modules ---------------------------------------------------------------------

_IMPORT_LINE = re.compile(r"^\s*from\s+(\.*[\w.]*)\s+import\s+\(?([^#\n]*(?:\n[^#)\n]*)*)\)?", re.MULTILINE)


def _import_index() -> dict[str, list[str]]:
    """name -> scanned files (relative) that import it and mention a launch option: where callers are."""
    assert _PROJECT is not None
    if _PROJECT._imports is None:
        index: dict[str, list[str]] = {}
        for rel, absolute in _PROJECT.files.items():
            try:
                text = absolute.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if not any(word in text for word in LAUNCH_WORDS):
                continue
            for match in _IMPORT_LINE.finditer(text):
                for name in re.findall(r"\b(\w+)\b(?:\s+as\s+\w+)?", match.group(2)):
                    if name != "as":
                        index.setdefault(name, []).append(rel)
        _PROJECT._imports = {name: sorted(set(files)) for name, files in index.items()}
    return _PROJECT._imports


@dataclass
class CallerSite:
    """A launch or config in another module whose value for `key` comes (in part) from this module."""

    inv: Any  # the caller's inventory
    where: str  # launch | autotune | config
    kernel: str | None
    node: cst.CSTNode  # the value expression at the caller
    val: Val  # the possibles that originate in the helper's module
    values: dict[str, Val]
    guard: str | None

    @property
    def location(self) -> str:
        return f"{self.inv.path}:{self.inv.span(self.node).line}"


def caller_sites(inv, key: str) -> list[CallerSite]:
    """Launch/config values in other scanned modules that originate in this module's helpers."""
    if _PROJECT is None or (path := absolute_path(inv)) is None or _PROJECT.relative(path) is None:
        return []
    cache = inv.__dict__.setdefault("_caller_sites", {})
    if key in cache:
        return cache[key]
    register_current(inv)
    functions = set(inv._scopes.functions)
    index = _import_index()
    files = sorted({f for name in functions for f in index.get(name, ()) if f != inv.path})
    sites: list[CallerSite] = []
    for rel in files:
        if not _may_set(rel, key):
            continue  # no launch or autotune config there can carry `key`: not worth a libcst parse
        other = load(_PROJECT.files[rel])
        if other is None or other is inv:
            continue
        sites += [s for s in _sites_of(other, key) if s.val.possibles]
    # the possibles set here, as this module's own (module None): the finding goes at their node
    here = [
        replace(
            s,
            val=Val(
                [replace(p, module=None) for p in (s.val.possibles or ()) if _same_tree(p.module, inv)],
                s.val.partial or any(not _same_tree(p.module, inv) for p in (s.val.possibles or ())),
            ),
        )
        for s in sites
    ]
    cache[key] = [s for s in here if s.val.possibles]
    return cache[key]


def _same_tree(module: Any, inv: Any) -> bool:
    """The possible was resolved in this module: in `inv` itself, or in the helper copy that value flow loaded
    before the engine analysed the file over that very tree (parsed_module; register_current then replaces
    the copy, but callers loaded earlier still point at it). Its nodes are inv's nodes, so the finding can
    go there. A copy parsed separately has other nodes and stays apart."""
    return module is inv or (module is not None and getattr(module, "module", None) is inv.module)


_LAUNCH_ATTRIBUTES = ("run", "warmup")
CALLER_KEYS = ("num_warps", "num_stages")  # the keys the Triton rules follow to callers (option_sites)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_DECORATOR_LINE = re.compile(r"^[ \t]*@.*$", re.MULTILINE)
_TUNER_ALIAS = re.compile(r"\bautotune\s+as\b")


def _may_set(rel: str, key: str) -> bool:
    """Can the module have a site `_sites_of` yields for `key`? A superset, from text and `ast` (a fraction of
    a libcst parse), once per module, key and process: a launch or wrapped launch passes `key` as a keyword
    (the inventory reads launch values from keywords only), and autotune configs need a called
    `@...autotune(...)` decorator. Unreadable or unparsable text answers yes: the libcst load decides."""
    assert _PROJECT is not None
    known = _PROJECT._may_set.get((rel, key))
    if known is None:
        known = _PROJECT._may_set[(rel, key)] = _may_set_in(_PROJECT.files[rel], key)
    return known


def _may_set_in(path: Path, key: str) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True
    return may_set_in_text(text, key, lambda: parse_or_none(text))


def may_set_in_text(text: str, key: str, tree_of: Callable[[], ast.Module | None]) -> bool:
    """_may_set over a module's text; `tree_of()` gives its `ast` (None: unparsable), asked only when the
    text has a `key=` or an autotune decorator line (the project-facts pass hands over its own tree)."""
    return _keys_may_set(text, (key,), tree_of)[key]


def launch_keys_known(text: str, tree: ast.Module | None) -> dict[str, bool]:
    """_may_set for the keys caller_sites asks (num_warps, num_stages), from the project-facts pass's tree:
    computed once per module for the whole scan instead of once per worker process."""
    return _keys_may_set(text, CALLER_KEYS, lambda: tree)


def _keys_may_set(text: str, keys: tuple[str, ...], tree_of: Callable[[], ast.Module | None]) -> dict[str, bool]:
    """may_set_in_text for several keys, sharing the text scans and the module's launch shape."""
    line_at = _LineAt(text)
    keyword_lines = {key: _keyword_lines(text, key, line_at) for key in keys}
    tuned = "autotune" in text  # both the decorator test and _TUNER_ALIAS need the word
    decorator_lines = (
        {line_at(m.start()) for m in _DECORATOR_LINE.finditer(text) if "autotune" in m.group()} if tuned else set()
    )
    aliased = tuned and _TUNER_ALIAS.search(text) is not None
    asked = [key for key in keys if keyword_lines[key] or decorator_lines or aliased]
    out = dict.fromkeys(keys, False)  # the common case: no ast parse
    if not asked:
        return out
    tree = tree_of()
    if tree is None:
        return out | dict.fromkeys(asked, True)
    shape = _LaunchShape(tree)
    if shape.aliased_tuner:
        decorator_lines |= {line_at(m.start()) for m in _DECORATOR_LINE.finditer(text)}
    if any(shape.autotuned(node) for node in _statements_at(tree, decorator_lines)):
        return out | dict.fromkeys(asked, True)
    for key in asked:
        out[key] = _keyword_at_launch(tree, shape, key, keyword_lines[key])
    return out


def _keyword_lines(text: str, key: str, line_at: _LineAt) -> set[int]:
    if key not in text:  # the regex below needs the word: skip its scan of the whole text
        return set()
    return {line_at(m.start()) for m in re.finditer(rf"\b{re.escape(key)}\s*=(?!=)", text)}


def _keyword_at_launch(tree: ast.Module, shape: _LaunchShape, key: str, lines: set[int]) -> bool:
    for statement in _statements_at(tree, lines):
        for part in _header(statement):
            for node in ast.walk(part):
                if (
                    isinstance(node, ast.Call)
                    and any(k.arg == key for k in node.keywords)
                    and shape.may_launch(node.func)
                ):
                    return True
    return False


def preset_may_set(known: dict[str, dict[str, bool]]) -> None:
    """Answers of launch_keys_known per scanned file (POSIX path relative to the project root)."""
    if _PROJECT is not None:
        for rel, keys in known.items():
            for key, value in keys.items():
                _PROJECT._may_set[(rel, key)] = value


class _LineAt:
    """offset -> 1-based line, by bisection over the line starts (computed on first use)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts: list[int] | None = None

    def __call__(self, offset: int) -> int:
        if self.starts is None:
            self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return bisect_right(self.starts, offset)


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None) or ()
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _statements_at(tree: ast.Module, lines: set[int]) -> Iterator[ast.stmt]:
    """The innermost statements spanning each line, and every compound statement around them."""
    if not lines:
        return
    ordered = sorted(lines)
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field_name in _BODIES:
            for child in getattr(node, field_name, None) or ():
                if not isinstance(child, ast.stmt):  # an except handler or a match case: its body holds them
                    stack.append(child)
                    continue
                first = bisect_left(ordered, _first_line(child))
                if first < len(ordered) and ordered[first] <= (child.end_lineno or child.lineno):
                    yield child
                    stack.append(child)


def _header(statement: ast.stmt) -> Iterator[ast.AST]:
    """A statement's own expressions, not those of the statements in its bodies."""
    for field_name, value in ast.iter_fields(statement):
        if field_name in _BODIES:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield item


class _LaunchShape:
    """Which callees TritonInventory may read as a launch, over-approximated from `ast`: a subscripted
    callee, `.run` / `.warmup`, or a plain name that resolve_function may follow to a launching function
    (one of the module's own functions whose body has such a call, or an imported name; never dict or
    Config). A local class, parameter or variable is not followed, so calling one is no launch."""

    def __init__(self, tree: ast.Module) -> None:
        self.tuners = {"autotune"}
        self.imported: set[str] = set()
        self.star = False
        self.local: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}  # module functions and methods
        self._launching: dict[str, bool] = {}
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]
        while stack:
            node, in_function = stack.pop()
            for field_name in _BODIES:
                for child in getattr(node, field_name, None) or ():
                    if isinstance(child, (ast.Import, ast.ImportFrom)):
                        self._imports(child)
                    elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not in_function:
                        self.local.setdefault(child.name, []).append(child)
                    stack.append((child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))))
        self.aliased_tuner = len(self.tuners) > 1

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.star |= alias.name == "*"
            self.imported.add(alias.asname or alias.name.split(".", 1)[0])
            if alias.asname and alias.name.rsplit(".", 1)[-1] == "autotune":
                self.tuners.add(alias.asname)

    def autotuned(self, node: ast.stmt) -> bool:
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _called_name(decorator) in self.tuners for decorator in node.decorator_list
        )

    def may_launch(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Subscript):
            return True
        if isinstance(func, ast.Attribute):
            return func.attr in _LAUNCH_ATTRIBUTES
        if not isinstance(func, ast.Name) or func.id in ("dict", "Config"):
            return False
        if func.id in self.local:
            if func.id not in self._launching:
                self._launching[func.id] = any(_launches(f) for f in self.local[func.id])
            return self._launching[func.id]
        return self.star or func.id in self.imported


def _called_name(decorator: ast.expr) -> str | None:
    func = decorator.func if isinstance(decorator, ast.Call) else None
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _launches(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """inventory._launches over `ast`: a subscripted callee or `.run(...)` in the body."""
    return any(
        isinstance(node, ast.Call)
        and (isinstance(node.func, ast.Subscript) or isinstance(node.func, ast.Attribute) and node.func.attr == "run")
        for node in ast.walk(function)
    )


def _sites_of(other, key: str) -> Iterator[CallerSite]:
    for launch in other.launches:
        val = launch.options.get(key) or launch.meta.get(key)
        if val is not None and val.known:
            node = launch.option_nodes.get(key) or launch.meta_nodes.get(key)
            yield CallerSite(other, "launch", launch.kernel, node, val, {**launch.meta, **launch.options}, launch.guard)
    for kernel in other.kernels:
        for config in kernel.autotune.configs if kernel.autotune else ():
            val = config.value(key)
            if val is not None and val.known:
                node = config.option_nodes.get(key) or config.meta_nodes.get(key)
                yield CallerSite(
                    other, "autotune", kernel.name, node, val, {**config.meta, **config.options}, config.guard
                )


def is_reported_elsewhere(possible: Possible) -> bool:
    """A value from a scanned module's helper: that module reports it at its origin."""
    module = possible.module
    if module is None or _PROJECT is None:
        return False
    path = absolute_path(module)
    return path is not None and _PROJECT.relative(path) is not None


# ---- describing a flow ----------------------------------------------------------------------------


def value_range(val: Val) -> str | None:
    """'4..32' over every possible integer value (Ranges included); None when unbounded or unknown."""
    if not val.known or not val.possibles or val.partial:
        return None
    lows = [low for p in val.possibles if (low := lower(p.value)) is not None]
    highs = [high for p in val.possibles if (high := upper(p.value)) is not None]
    if len(lows) < len(val.possibles) or len(highs) < len(val.possibles):
        return None
    lo, hi = min(lows), max(highs)
    return str(lo) if lo == hi else f"{lo}..{hi}"


def describe(possible: Possible, val: Val | None = None) -> str:
    """'4..32 from `_num_warps(block)`; 32 for block >= 16384' (empty for a value written in place)."""
    value = possible.value
    shown = value.hi if isinstance(value, Range) else value
    parts = []
    span = value_range(val) if val is not None else None
    if possible.via:
        parts.append(f"{span + ' ' if span else ''}from `{possible.via}`")
    elif span and val is not None and len(val.values) > 1:
        parts.append(f"one of {span}")
    if possible.when:
        parts.append(f"{shown} for {possible.when}")
    return "; ".join(parts)


def origin_record(possible: Possible, inv) -> dict[str, Any]:
    owner = possible.module or inv
    span = owner.span(possible.node)
    value = possible.value
    return {
        "path": owner.path,
        "line": span.line,
        "column": span.column,
        "text": owner.code(possible.node).strip(),
        "value": str(value) if isinstance(value, Range) else value,
        "when": possible.when,
        "via": possible.via,
    }


# ---- runtime findings: launch site -> origin --------------------------------------------------------


def origin_of(root: str | Path, path: str, line: int, param: str) -> list[dict[str, Any]]:
    """Where the value of `param` (num_warps, num_stages, BLOCK_M...) of the launch at path:line is set.

    Returns one record per origin: {path, line, column, text, value, when, via}, paths relative to
    root; [] when no launch is on that line or the value cannot be followed. The launch's own keyword
    wins; else the kernel's autotune configs, @triton.heuristics, then the parameter's default.
    """
    base = Path(root).resolve()
    if _PROJECT is None or _PROJECT.root != base:
        set_project(base)
    file = base / path
    inv = load(file)
    if inv is None:
        return []
    launch = next((site for site in inv.launches if site.span.line <= line <= site.span.end_line), None)
    if launch is None:
        return []
    kernel = inv.kernel(launch.kernel) if launch.kernel_known else None
    vals: list[Val] = []
    direct = launch.options.get(param) or launch.meta.get(param)
    if direct is not None:
        vals = [direct]
    elif kernel is not None and kernel.autotune is not None:
        vals = [v for c in kernel.autotune.configs for v in [c.value(param)] if v is not None]
    if not vals and kernel is not None and param in kernel.heuristics:
        vals = [kernel.heuristics[param]]
    if not vals and kernel is not None and kernel.param(param) is not None and kernel.param(param).default:
        vals = [kernel.param(param).default]
    records, seen = [], set()
    for val in vals:
        for possible in val.possibles or ():
            record = origin_record(possible, inv)
            key = (record["path"], record["line"], record["column"])
            if key not in seen:
                seen.add(key)
                records.append(record)
    return records
