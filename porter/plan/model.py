"""The model description `porter plan` reasons from: a recommendation model as data (YAML).

Loading validates every field and raises ConfigError naming the file and the field, so a typo in
a 200-table description points at the line to fix rather than at a traceback.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from porter.errors import ConfigError

DTYPE_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
PLACEMENTS = ("hbm", "uvm", "host")
SHARDINGS = ("table_wise", "row_wise", "column_wise", "data_parallel", "auto")
# optimizer -> (fp32 words of state per row, fp32 words of state per element)
OPTIMIZER_STATE = {"sgd": (0, 0), "rowwise_adagrad": (1, 0), "adagrad": (0, 1), "adam": (0, 2)}
MATMUL_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
# Every number of a description is finite and at most 2**53 (exact as a float, so sizes multiply without
# overflowing); a job is at most MAX_GPUS GPUs (the planner keeps per-GPU lists).
MAX_NUMBER = 2**53
MAX_GPUS = 2**16
TF32_FALLBACKS = ("fp32", "bf16x3")
INTERACTIONS = ("dot", "cat")
EMBEDDING_BACKWARDS = ("fused", "sparse")


def hbm_hit_rate(placement: str, cache_fraction: float, measured: float | None) -> float:
    """Share of lookups served from HBM: all in HBM, none on the host, and for a UVM cache the
    measured hit rate when known, else the cached share of the rows."""
    if placement == "hbm":
        return 1.0
    if placement == "host":
        return 0.0
    return cache_fraction if measured is None else measured


@dataclass(frozen=True)
class Table:
    name: str
    rows: int
    dim: int
    dtype: str = "fp32"
    pooling: float = 1.0  # lookups per sample
    optimizer: str = "rowwise_adagrad"
    placement: str = "hbm"  # hbm | uvm | host
    cache_fraction: float = 0.0  # uvm: share of rows cached in HBM
    cache_hit_rate: float | None = None  # uvm: share of lookups served by the cache (default: cache_fraction)
    sharding: str = "auto"
    shards: int | None = None  # column_wise / row_wise shard count (default: all GPUs, column: dim/32)

    @property
    def param_bytes(self) -> float:
        return self.rows * self.dim * DTYPE_BYTES[self.dtype]

    @property
    def state_bytes(self) -> float:
        per_row, per_elem = OPTIMIZER_STATE[self.optimizer]
        return self.rows * 4 * (per_row + per_elem * self.dim)

    @property
    def total_bytes(self) -> float:
        return self.param_bytes + self.state_bytes

    @property
    def row_bytes(self) -> float:
        """Weight bytes one lookup reads."""
        return self.dim * DTYPE_BYTES[self.dtype]

    @property
    def row_state_bytes(self) -> float:
        per_row, per_elem = OPTIMIZER_STATE[self.optimizer]
        return 4 * (per_row + per_elem * self.dim)

    @property
    def hit_rate(self) -> float:
        return hbm_hit_rate(self.placement, self.cache_fraction, self.cache_hit_rate)


@dataclass(frozen=True)
class Dense:
    num_dense_features: int
    bottom_mlp: tuple[int, ...]
    top_mlp: tuple[int, ...]
    interaction: str = "dot"
    param_dtype: str = "fp32"


@dataclass(frozen=True)
class ModelDesc:
    name: str
    tables: tuple[Table, ...]
    dense: Dense
    batch_size_per_gpu: int
    gpus: int
    gpus_per_node: int = 8
    interconnect: str = "default"  # informational: the target's scale-up fabric is what is priced
    activation_dtype: str = "fp32"
    matmul_precision: str = "tf32"
    tf32_fallback: str = "fp32"  # how fp32-with-TF32 GEMMs run where the target has no TF32
    fp8: bool = False  # MLP GEMMs in fp8
    fp8_format: str = "e4m3"
    dense_optimizer: str = "adam"
    embedding_backward: str = "fused"  # fused (FBGEMM TBE) | sparse (per-lookup grads materialized)
    headroom: float = 0.10
    pad_inputs_to: int = 1  # zero-pad the MLPs' input widths (dense features, interaction) to a multiple
    source: str = ""

    def replace(self, **changes: Any) -> ModelDesc:
        return dataclasses.replace(self, **changes)

    @property
    def global_batch(self) -> int:
        return self.batch_size_per_gpu * self.gpus

    @property
    def embedding_dim_out(self) -> int:
        """Width of the bottom MLP output, which the dot interaction pairs with each table."""
        return self.dense.bottom_mlp[-1]

    def interaction_width(self) -> int:
        features = len(self.tables) + 1
        if self.dense.interaction == "dot":
            return features * (features - 1) // 2 + self.embedding_dim_out
        return sum(t.dim for t in self.tables) + self.embedding_dim_out

    def mlp_layers(self) -> list[tuple[str, int, int]]:
        """(name, in, out) of every Linear, bottom then top."""
        layers = []
        widths = [_round_up(self.dense.num_dense_features, self.pad_inputs_to), *self.dense.bottom_mlp]
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append((f"bottom{i}", a, b))
        widths = [_round_up(self.interaction_width(), self.pad_inputs_to), *self.dense.top_mlp]
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append((f"top{i}", a, b))
        return layers

    def dense_params(self) -> int:
        return sum(a * b + b for _, a, b in self.mlp_layers())


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


# ---------------------------------------------------------------- loading and validation


class _Fields:
    """Reads fields of one mapping, raising ConfigError that names file and dotted field path."""

    def __init__(self, data: Any, file: str, where: str):
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: {where or 'top level'}: expected a mapping, got {type(data).__name__}")
        self.data, self.file, self.where = data, file, where
        self.used: set[str] = set()

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.file}: field '{self.path(key)}': {message}")

    def get(self, key: str, default: Any = ..., *, kind: type | tuple = object) -> Any:
        self.used.add(key)
        if key not in self.data or self.data[key] is None:
            if default is ...:
                raise self.error(key, "is required")
            return default
        value = self.data[key]
        if kind is not object and (
            not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind)
        ):
            raise self.error(key, f"expected {_kind_name(kind)}, got {value!r}")
        return value

    def number(
        self,
        key: str,
        default: Any = ...,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        integer: bool = False,
    ) -> Any:
        value = self.get(key, default, kind=int if integer else (int, float))
        if value is None:
            return None
        if abs(value) > MAX_NUMBER or not math.isfinite(value):
            raise self.error(key, f"expected a finite number of at most 2**53, got {_short(value)}")
        if minimum is not None and value < minimum or maximum is not None and value > maximum:
            bounds = f"[{minimum}, {maximum}]" if maximum is not None else f">= {minimum}"
            raise self.error(key, f"{value!r} is out of range, must be {bounds}")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: Any = ...) -> str:
        value = self.get(key, default, kind=str)
        if value not in choices:
            raise self.error(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def widths(self, key: str) -> tuple[int, ...]:
        value = self.get(key, kind=list)
        if not value or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
            raise self.error(key, f"expected a non-empty list of positive integers, got {value!r}")
        return tuple(value)

    def check_unknown(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise self.error(unknown[0], "unknown field (typo?)")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} digits)"


def _as_tuple(kind: type | tuple) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple) -> str:
    names = {
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
        bool: "true/false",
    }
    return " or ".join(names.get(k, k.__name__) for k in _as_tuple(kind))


def _table(data: Any, file: str, index: int, default_optimizer: str) -> Table:
    f = _Fields(data, file, f"tables[{index}]")
    name = f.get("name", f"table{index}", kind=str)
    f.where = f"tables[{index}] ({name})"
    placement = f.choice("placement", PLACEMENTS, "hbm")
    table = Table(
        name=name,
        rows=f.number("rows", minimum=1, integer=True),
        dim=f.number("dim", minimum=1, integer=True),
        dtype=f.choice("dtype", tuple(DTYPE_BYTES), "fp32"),
        pooling=float(f.number("pooling", 1.0, minimum=0)),
        optimizer=f.choice("optimizer", tuple(OPTIMIZER_STATE), default_optimizer),
        placement=placement,
        cache_fraction=float(f.number("cache_fraction", 0.0, minimum=0, maximum=1)),
        cache_hit_rate=f.number("cache_hit_rate", None, minimum=0, maximum=1),
        sharding=f.choice("sharding", SHARDINGS, "auto"),
        shards=f.number("shards", None, minimum=1, integer=True),
    )
    if placement == "uvm" and "cache_fraction" not in data:
        raise f.error("cache_fraction", "is required when placement is uvm")
    f.check_unknown()
    return table


def _optimizers(value: Any, file: str) -> tuple[str, str]:
    if isinstance(value, str):
        value = {"dense": value, "embedding": value if value in OPTIMIZER_STATE else "rowwise_adagrad"}
    f = _Fields(value, file, "optimizer")
    dense = f.choice("dense", ("sgd", "adagrad", "adam"), "adam")
    embedding = f.choice("embedding", tuple(OPTIMIZER_STATE), "rowwise_adagrad")
    f.check_unknown()
    return dense, embedding


def parse_model(data: Any, file: str = "<model>") -> ModelDesc:
    """Validate a loaded YAML document into a ModelDesc."""
    f = _Fields(data, file, "")
    dense_optimizer, table_optimizer = _optimizers(f.get("optimizer", "adam"), file)
    raw_tables = f.get("tables", kind=list)
    if not raw_tables:
        raise f.error("tables", "needs at least one table")
    tables = tuple(_table(t, file, i, table_optimizer) for i, t in enumerate(raw_tables))
    names = [t.name for t in tables]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise f.error("tables", f"table name {duplicate!r} appears twice")
    d = _Fields(f.get("dense", kind=dict), file, "dense")
    dense = Dense(
        num_dense_features=d.number("num_dense_features", minimum=0, integer=True),
        bottom_mlp=d.widths("bottom_mlp"),
        top_mlp=d.widths("top_mlp"),
        interaction=d.choice("interaction", INTERACTIONS, "dot"),
        param_dtype=d.choice("param_dtype", ("fp32", "bf16", "fp16"), "fp32"),
    )
    d.check_unknown()
    fp8 = f.get("fp8", False, kind=(bool, dict))
    fp8_format = "e4m3"
    if isinstance(fp8, dict):
        g = _Fields(fp8, file, "fp8")
        fp8_format = g.choice("format", ("e4m3", "e5m2"), "e4m3")
        fp8 = g.get("enabled", True, kind=bool)
        g.check_unknown()
    model = ModelDesc(
        name=f.get("name", Path(file).stem, kind=str),
        tables=tables,
        dense=dense,
        batch_size_per_gpu=f.number("batch_size_per_gpu", minimum=1, integer=True),
        gpus=f.number("gpus", minimum=1, maximum=MAX_GPUS, integer=True),
        gpus_per_node=f.number("gpus_per_node", 8, minimum=1, integer=True),
        interconnect=f.get("interconnect", "default", kind=str),
        activation_dtype=f.choice("activation_dtype", ("fp32", "bf16", "fp16"), "fp32"),
        matmul_precision=f.choice("matmul_precision", MATMUL_PRECISIONS, "tf32"),
        tf32_fallback=f.choice("tf32_fallback", TF32_FALLBACKS, "fp32"),
        fp8=bool(fp8),
        fp8_format=fp8_format,
        dense_optimizer=dense_optimizer,
        embedding_backward=f.choice("embedding_backward", EMBEDDING_BACKWARDS, "fused"),
        headroom=float(f.number("headroom", 0.10, minimum=0, maximum=0.9)),
        source=file,
    )
    f.get("notes", None)  # free text for the reader
    f.check_unknown()
    if model.gpus > model.gpus_per_node and model.gpus % model.gpus_per_node:
        raise ConfigError(
            f"{file}: field 'gpus': {model.gpus} GPUs span nodes of {model.gpus_per_node} (gpus_per_node), so it "
            "must be a multiple of gpus_per_node: a job past one node runs on whole nodes"
        )
    if dense.interaction == "dot":
        for i, table in enumerate(tables):
            if table.dim != dense.bottom_mlp[-1]:
                raise ConfigError(
                    f"{file}: field 'tables[{i}] ({table.name}).dim': {table.dim} must equal "
                    f"dense.bottom_mlp[-1] ({dense.bottom_mlp[-1]}) for the dot interaction"
                )
    return model


def load_model(path: str | Path) -> ModelDesc:
    """Read and validate a model description file."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: model description not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {_yaml_problem(error)}") from None
    except (OSError, ValueError) as error:  # not UTF-8, or an integer too long to convert
        raise ConfigError(f"{path}: cannot read the model description: {error}") from None
    return parse_model(data, str(path))


def _yaml_problem(error: yaml.YAMLError) -> str:
    """One line: what the parser expected and where (PyYAML's message spans several lines)."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else problem
