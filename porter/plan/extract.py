"""`porter plan --extract REPO`: draft a model description from the code, by libcst.

Reads torchrec `EmbeddingBagConfig`/`EmbeddingConfig(num_embeddings=..., embedding_dim=..., name=...)`
(also inside list comprehensions over constant lists), `nn.EmbeddingBag`/`nn.Embedding(num, dim)`,
MLP width lists (`dense_arch_layer_sizes=[...]`, `over_arch_layer_sizes=[...]`, names such as
BOTTOM_MLP/TOP_MLP), `nn.Linear(in, out)` chains when no width list is found, batch-size constants
and argparse defaults, `torch.backends.cuda.matmul.allow_tf32`, fp8 dtypes, optimizers. Values are
resolved through module-level constants (across files) and integer arithmetic; anything else is
written as `null  # TODO(porter): could not resolve ...` for the user to fill.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from porter.errors import UsageError

MAX_FILE_BYTES = 1_000_000
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".tox"}
BOTTOM_NAMES = ("dense_arch_layer_sizes", "bottom_mlp", "bot_mlp", "dense_arch", "bottom_mlp_sizes", "arch_mlp_bot")
TOP_NAMES = ("over_arch_layer_sizes", "top_mlp", "over_arch", "top_mlp_sizes", "arch_mlp_top")
DENSE_IN_NAMES = ("dense_in_features", "num_dense_features", "num_dense", "dense_features", "in_features_dense")


@dataclass
class Value:
    value: Any
    where: str  # "path:line"
    note: str = ""


@dataclass
class Draft:
    tables: list[dict] = field(default_factory=list)
    bottom: Value | None = None
    top: Value | None = None
    dense_in: Value | None = None
    batch: Value | None = None
    tf32: Value | None = None
    fp8: Value | None = None
    dense_optimizer: Value | None = None
    embedding_optimizer: Value | None = None
    linears: list[tuple[str, int | None, int | None, str]] = field(default_factory=list)  # owner, in, out, where


def _python_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    files = []
    for path in sorted(root.rglob("*.py")):
        if any(part in SKIP_DIRS or part.startswith(".") for part in path.relative_to(root).parts[:-1]):
            continue
        if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            continue
        files.append(path)
    return files


def _dotted(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


class _Constants:
    """Module-level NAME = <int / list / arithmetic> from every file, later files not overriding."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def collect(self, module: cst.Module) -> None:
        for stmt in module.body:
            if not m.matches(stmt, m.SimpleStatementLine(body=[m.Assign() | m.AnnAssign()])):
                continue
            node = cast(cst.SimpleStatementLine, stmt).body[0]
            if not isinstance(node, (cst.Assign, cst.AnnAssign)):  # never: the matcher above said so
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if node.value is None:
                continue
            value = self.resolve(node.value)
            for target in targets:
                if isinstance(target, cst.Name) and value is not None:
                    self.values.setdefault(target.value, value)

    def resolve(self, node: cst.BaseExpression, local: dict[str, Any] | None = None) -> Any:
        """An int, float, str, bool or list of them, or None when not resolvable statically."""
        local = local or {}
        if isinstance(node, cst.Name):
            if node.value in local:
                return local[node.value]
            if node.value in ("True", "False"):
                return node.value == "True"
            return self.values.get(node.value)
        if isinstance(node, cst.Attribute):
            return self.values.get(node.attr.value)
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return ast.literal_eval(node.value)
        if isinstance(node, cst.List | cst.Tuple):
            items = [self.resolve(e.value, local) for e in node.elements]
            return None if any(i is None for i in items) else items
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            inner = self.resolve(node.expression, local)
            return -inner if isinstance(inner, (int, float)) else None
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, local)
        if isinstance(node, cst.FormattedString):
            return self._fstring(node, local)
        return None

    def _binary(self, node: cst.BinaryOperation, local: dict) -> Any:
        left, right = self.resolve(node.left, local), self.resolve(node.right, local)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            return None
        ops = {
            cst.Add: lambda a, b: a + b,
            cst.Subtract: lambda a, b: a - b,
            cst.Multiply: lambda a, b: a * b,
            cst.FloorDivide: lambda a, b: a // b if b else None,
            cst.Power: lambda a, b: a**b if b < 64 else None,
        }
        op = ops.get(type(node.operator))
        return op(left, right) if op else None

    def _fstring(self, node: cst.FormattedString, local: dict) -> str | None:
        parts = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            elif isinstance(part, cst.FormattedStringExpression):
                value = self.resolve(part.expression, local)
                if value is None:
                    return None
                parts.append(str(value))
        return "".join(parts)


def _kwargs(call: cst.Call) -> dict[str, cst.BaseExpression]:
    return {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, path: str, constants: _Constants, draft: Draft) -> None:
        self.path, self.constants, self.draft = path, constants, draft
        self.owner: list[str] = []  # enclosing class / assignment target, to group Linear chains
        self.comprehension_locals: list[dict[str, list]] = []

    def where(self, node: cst.CSTNode) -> str:
        return f"{self.path}:{self.get_metadata(PositionProvider, node).start.line}"

    # ---- context
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.owner.append(node.name.value)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.owner.pop()

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        """Expand `[Config(...) for i, n in enumerate(SIZES)]` / `for n in SIZES` over constant lists."""
        call = node.elt
        if not (
            isinstance(call, cst.Call)
            and _dotted(call.func).split(".")[-1] in ("EmbeddingBagConfig", "EmbeddingConfig")
        ):
            return True
        comp = node.for_in
        seq = comp.iter
        enumerate_ = isinstance(seq, cst.Call) and _dotted(seq.func) == "enumerate"
        values = self.constants.resolve(_positional(seq)[0] if enumerate_ and isinstance(seq, cst.Call) else seq)
        names = self._target_names(comp.target)
        if not isinstance(values, list) or not names:
            self._table(call, {}, note="inside a comprehension over values porter could not resolve")
            return False
        for index, item in enumerate(values):
            local = dict(zip(names, (index, item) if enumerate_ else (item,)))
            if not enumerate_ and len(names) > 1 and isinstance(item, (list, tuple)):
                local = dict(zip(names, item))
            self._table(call, local)
        return False

    @staticmethod
    def _target_names(target: cst.BaseExpression) -> list[str]:
        if isinstance(target, cst.Name):
            return [target.value]
        if isinstance(target, cst.Tuple):
            names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
            return names if len(names) == len(target.elements) else []
        return []

    # ---- assignments: width lists, batch size, tf32 switches, Linear owners
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = _dotted(target.target)
            short = name.split(".")[-1]
            self._named_value(short, node.value, node)
            if name.endswith("matmul.allow_tf32") and "cudnn" not in name:  # also `cuda.matmul...` after from-imports
                value = self.constants.resolve(node.value)
                self.draft.tf32 = Value(bool(value) if value is not None else None, self.where(node))
            self.owner.append(short)

    def leave_Assign(self, node: cst.Assign) -> None:
        for _ in node.targets:
            self.owner.pop()

    def _named_value(self, name: str, value_node: cst.BaseExpression, node: cst.CSTNode) -> None:
        lowered = name.lower()
        value = self.constants.resolve(value_node)
        if lowered in BOTTOM_NAMES and self.draft.bottom is None:
            self.draft.bottom = Value(value if _int_list(value) else None, self.where(node), f"from {name}")
        elif lowered in TOP_NAMES and self.draft.top is None:
            self.draft.top = Value(value if _int_list(value) else None, self.where(node), f"from {name}")
        elif lowered in DENSE_IN_NAMES and self.draft.dense_in is None:
            self.draft.dense_in = Value(value if isinstance(value, int) else None, self.where(node), f"from {name}")
        elif re.fullmatch(r"(global_|train_|per_gpu_|local_)?batch_size", lowered) and self.draft.batch is None:
            self.draft.batch = Value(value if isinstance(value, int) else None, self.where(node), f"from {name}")

    # ---- calls
    def visit_Call(self, node: cst.Call) -> None:
        func = _dotted(node.func)
        short = func.split(".")[-1]
        kwargs = _kwargs(node)
        if short in ("EmbeddingBagConfig", "EmbeddingConfig"):
            self._table(node, {})
        elif short in ("EmbeddingBag", "Embedding") and func.split(".")[0] in ("nn", "torch"):
            self._nn_embedding(node)
        elif short == "Linear" and func.split(".")[0] in ("nn", "torch"):
            args = _positional(node)
            fan_in = self.constants.resolve(kwargs.get("in_features", args[0] if args else cst.Name("_")))
            fan_out = self.constants.resolve(kwargs.get("out_features", args[1] if len(args) > 1 else cst.Name("_")))
            self.draft.linears.append(("/".join(self.owner), fan_in, fan_out, self.where(node)))
        elif short == "add_argument":
            self._argparse(node)
        elif func == "torch.set_float32_matmul_precision":
            value = self.constants.resolve(_positional(node)[0]) if _positional(node) else None
            self.draft.tf32 = Value(value in ("high", "medium") if value else None, self.where(node))
        elif func.startswith("torch.optim.") and short in ("Adam", "AdamW", "Adagrad", "SGD"):
            name = {"AdamW": "adam"}.get(short, short.lower())
            self.draft.dense_optimizer = self.draft.dense_optimizer or Value(name, self.where(node))
        for key, value in kwargs.items():
            self._named_value(key, value, node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if (
            node.attr.value in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
            and self.draft.fp8 is None
        ):
            self.draft.fp8 = Value("e5m2" if "e5m2" in node.attr.value else "e4m3", self.where(node), node.attr.value)
        if node.attr.value in ("EXACT_ROW_WISE_ADAGRAD", "ROW_WISE_ADAGRAD"):
            self.draft.embedding_optimizer = self.draft.embedding_optimizer or Value(
                "rowwise_adagrad", self.where(node)
            )
        elif node.attr.value in ("EXACT_ADAGRAD", "ADAM", "EXACT_SGD", "SGD") and _dotted(node.value).endswith(
            "EmbOptimType"
        ):
            name = {"EXACT_ADAGRAD": "adagrad", "ADAM": "adam"}.get(node.attr.value, "sgd")
            self.draft.embedding_optimizer = self.draft.embedding_optimizer or Value(name, self.where(node))

    def _argparse(self, node: cst.Call) -> None:
        flags = [self.constants.resolve(a) for a in _positional(node)]
        kwargs = _kwargs(node)
        if not any(isinstance(f, str) and f.lstrip("-").replace("-", "_") == "batch_size" for f in flags):
            return
        value = self.constants.resolve(kwargs["default"]) if "default" in kwargs else None
        if self.draft.batch is None or self.draft.batch.value is None:
            self.draft.batch = Value(
                value if isinstance(value, int) else None, self.where(node), "argparse --batch-size default"
            )

    def _table(self, call: cst.Call, local: dict, note: str = "") -> None:
        kwargs = _kwargs(call)
        where = self.where(call)

        def get(key: str) -> Any:
            return self.constants.resolve(kwargs[key], local) if key in kwargs else None

        name = get("name")
        if not isinstance(name, str):
            name = f"table{len(self.draft.tables)}"
        self.draft.tables.append(
            {"name": name, "rows": get("num_embeddings"), "dim": get("embedding_dim"), "where": where, "note": note}
        )

    def _nn_embedding(self, call: cst.Call) -> None:
        kwargs, args = _kwargs(call), _positional(call)
        rows = self.constants.resolve(kwargs.get("num_embeddings", args[0] if args else cst.Name("_")))
        dim = self.constants.resolve(kwargs.get("embedding_dim", args[1] if len(args) > 1 else cst.Name("_")))
        name = self.owner[-1] if self.owner else f"table{len(self.draft.tables)}"
        self.draft.tables.append({"name": name, "rows": rows, "dim": dim, "where": self.where(call), "note": ""})


def _int_list(value: Any) -> bool:
    return (
        isinstance(value, list) and bool(value) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def extract(repo: Path) -> Draft:
    """Collect everything the description needs from the Python files under repo."""
    repo = Path(repo)
    if not repo.exists():
        raise UsageError(f"{repo}: no such file or directory")
    files = _python_files(repo)
    modules = []
    constants = _Constants()
    for path in files:
        try:
            module = cst.parse_module(path.read_text(encoding="utf-8", errors="replace"))
        except cst.ParserSyntaxError:
            continue  # a file that does not parse holds nothing we could trust
        constants.collect(module)
        modules.append((path, module))
    draft = Draft()
    base = repo if repo.is_dir() else repo.parent
    for path, module in modules:
        MetadataWrapper(module).visit(_Collector(str(path.relative_to(base)), constants, draft))
    return draft


# ---------------------------------------------------------------- YAML rendering


def _todo(what: str) -> str:
    return f"null  # TODO(porter): could not resolve {what}"


def _scalar(value: Value | None, what: str, default: Any = None) -> str:
    if value is None or value.value is None:
        if default is not None:
            return f"{default}  # TODO(porter): not found in the code ({what}); default assumed"
        where = f" at {value.where}" if value else ""
        return _todo(f"{what}{where}")
    note = f" ({value.note})" if value.note else ""
    return f"{_yaml_value(value.value)}  # {value.where}{note}"


def _yaml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", value) else repr(value)
    return str(value)


def _mlp_from_linears(draft: Draft, hint: str) -> list[int] | None:
    chain = [(i, o) for owner, i, o, _ in draft.linears if hint in owner.lower()]
    outs = [o for i, o in chain if i is not None and o is not None]
    if not chain or len(outs) < len(chain):
        return None
    return outs


def render_yaml(draft: Draft, name: str) -> str:
    """The draft description, every value annotated with where it came from or a TODO."""
    bottom = draft.bottom if draft.bottom and draft.bottom.value else None
    top = draft.top if draft.top and draft.top.value else None
    if bottom is None and _mlp_from_linears(draft, "bottom"):
        bottom = Value(_mlp_from_linears(draft, "bottom"), "nn.Linear chain", "bottom")
    if top is None and _mlp_from_linears(draft, "top"):
        top = Value(_mlp_from_linears(draft, "top"), "nn.Linear chain", "top")
    dense_in = draft.dense_in
    if (dense_in is None or dense_in.value is None) and draft.linears:
        first = [i for owner, i, _, _ in draft.linears if "bottom" in owner.lower() and i is not None]
        if first:
            dense_in = Value(first[0], "first bottom nn.Linear")
    tf32 = draft.tf32
    precision = ("tf32" if tf32.value else "fp32") if tf32 and tf32.value is not None else None
    lines = [
        "# Drafted by `porter plan --extract`; check every value and fill each TODO(porter).",
        f"name: {_yaml_value(name)}",
        f"gpus: {_todo('the number of GPUs (world size is a launch-time setting)')}",
        "gpus_per_node: 8",
        f"batch_size_per_gpu: {_scalar(draft.batch, 'the per-GPU batch size')}",
        "activation_dtype: fp32",
        f"matmul_precision: {_scalar(Value(precision, tf32.where) if precision and tf32 else None, 'allow_tf32', 'fp32')}",
        f"fp8: {'true  # ' + draft.fp8.where + ' (' + draft.fp8.note + ')' if draft.fp8 else 'false'}",
        "optimizer:",
        f"  dense: {_scalar(draft.dense_optimizer, 'the dense optimizer', 'adam')}",
        f"  embedding: {_scalar(draft.embedding_optimizer, 'the embedding optimizer', 'rowwise_adagrad')}",
        "dense:",
        f"  num_dense_features: {_scalar(dense_in, 'the number of dense features')}",
        f"  bottom_mlp: {_scalar(bottom, 'the bottom MLP widths')}",
        f"  top_mlp: {_scalar(top, 'the top MLP widths')}",
        "  interaction: dot",
        "tables:",
    ]
    if not draft.tables:
        lines[-1] = "tables: []  # TODO(porter): no embedding tables found"
    for table in draft.tables:
        lines.append(
            f"  - name: {_yaml_value(table['name'])}  # {table['where']}"
            + (f" ({table['note']})" if table["note"] else "")
        )
        for key, what in (("rows", "num_embeddings"), ("dim", "embedding_dim")):
            value = table[key]
            lines.append(f"    {key}: {value if isinstance(value, int) else _todo(what + ' at ' + table['where'])}")
        lines.append(f"    pooling: {_todo('lookups per sample (not in the model code; read it from the data)')}")
        lines.append("    placement: hbm")
        lines.append("    sharding: auto")
    return "\n".join(lines) + "\n"
