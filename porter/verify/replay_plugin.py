"""pytest plugin porter injects for CPU replay (`-p porter.verify.replay_plugin`).

The verifier runs the project's tests with TRITON_INTERPRET=1 and PORTER_EMULATE_TARGET=<target>.
This plugin makes that run honest and informative:

- autotune: the interpreter has no GPU driver, so `Autotuner.do_bench` cannot ask for a benchmarker.
  `Autotuner._bench` is wrapped so every (pruned) config really runs once on a snapshot of the
  arguments; the outputs of all configs must agree, else the test fails naming the config. The
  first config of the list is then the one kept (there is no timing worth trusting on a CPU).
- device redirection: "cuda"/"cuda:N"/torch.device("cuda") given to tensor factories, `.to()`,
  `.cuda()` and modules land on the CPU, which stands in for the emulated GPU. The target's answers
  to "am I on AMD, which arch" (torch, Triton's driver, platform objects) come from
  porter.verify.emulation. What cannot be emulated honestly (event timings, CUDA graphs, memory
  queries, Triton's launcher API) or inline asm is reported as not replayed with the reason, never
  as passed.
- launches: every kernel launch is recorded (kernel, source file, signature, constexprs, num_warps,
  num_stages, AMD options, autotune configs, dot operand dtypes, tests) to a JSON file in
  $PORTER_REPLAY_DIR, which the verifier reads for cross-compilation.

Kept importable with only the standard library at module level: torch and triton are imported in
`pytest_load_initial_conftests`, after the environment is set and before any conftest runs.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from porter.verify.emulation import NotReplayable, install_platform_hooks, install_torch, install_triton
from porter.verify.protocol import BF16_DOT_ISSUE, NOT_REPLAYED_PREFIX, launch_identity
from porter.verify.replay_imports import TRACKER

if os.environ.get("PORTER_REPLAY_DIR"):
    TRACKER.install()  # now, before pytest imports the conftests and the test modules

_CUDA_DEVICE = re.compile(r"^cuda(:\d+)?$")
_FACTORIES = (
    "empty",
    "zeros",
    "ones",
    "full",
    "rand",
    "randn",
    "randint",
    "randperm",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "empty_strided",
    "normal",
    "tril_indices",
    "triu_indices",
)
_TENSOR_NEW = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided")
# Messages of the CPU build when a test reaches for a CUDA runtime feature porter does not emulate.
_NO_RUNTIME = (
    "not compiled with cuda",
    "compiled without cuda",
    "no cuda gpus",
    "found no nvidia driver",
    "0 active drivers",
    "cuda driver",
    "torch.cuda.graph",
    "cudagraph",
)


class _State:
    def __init__(self) -> None:
        self.launches: dict[str, dict[str, Any]] = {}
        self.not_replayed: dict[str, str] = {}
        self.autotune_disagreements: list[dict[str, Any]] = []
        self.autotune_configs: dict[str, list[dict[str, Any]]] = {}  # "module:qualname" -> configs
        self.current_test = ""
        self.current_launch: dict[str, Any] | None = None
        self.test_launch_keys: dict[str, set[str]] = {}
        self.root = Path.cwd()
        self.lock = threading.Lock()
        self.emulation_notes: list[str] = []  # platform objects the emulation could not set


STATE = _State()


# ---------------------------------------------------------------- device redirection


def redirect_device(device: Any) -> Any:
    """Map a CUDA device designation to the CPU; leave anything else as it is."""
    import torch

    if isinstance(device, torch.device) and device.type == "cuda":
        return torch.device("cpu")
    if isinstance(device, str) and _CUDA_DEVICE.match(device.strip()):
        return "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        return "cpu"  # an int device index means a CUDA device in torch
    return device


def _with_device_kwarg(function):
    def redirected(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = redirect_device(kwargs["device"])
        return function(*args, **kwargs)

    redirected.__wrapped__ = function
    redirected.__name__ = getattr(function, "__name__", "redirected")
    return redirected


def _redirect_to_args(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    args = tuple(redirect_device(a) if not _is_dtype(a) else a for a in args)
    if "device" in kwargs:
        kwargs["device"] = redirect_device(kwargs["device"])
    return args, kwargs


def _is_dtype(value: Any) -> bool:
    import torch

    return isinstance(value, torch.dtype) or hasattr(value, "data_ptr")


def install_device_redirection(target) -> None:
    """Patch torch so hard-coded CUDA devices run on the CPU, answering queries as `target`."""
    import torch

    for name in _FACTORIES:
        if hasattr(torch, name):
            setattr(torch, name, _with_device_kwarg(getattr(torch, name)))
    for name in _TENSOR_NEW:
        if hasattr(torch.Tensor, name):
            setattr(torch.Tensor, name, _with_device_kwarg(getattr(torch.Tensor, name)))

    tensor_to = torch.Tensor.to

    def to(self, *args, **kwargs):
        args, kwargs = _redirect_to_args(args, kwargs)
        return tensor_to(self, *args, **kwargs)

    torch.Tensor.to = to  # type: ignore[method-assign]  # the replay patches placement onto the CPU on purpose
    torch.Tensor.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]  # the replay patches placement onto the CPU on purpose

    module_to = torch.nn.Module.to

    def module_redirected_to(self, *args, **kwargs):
        args, kwargs = _redirect_to_args(args, kwargs)
        return module_to(self, *args, **kwargs)

    torch.nn.Module.to = module_redirected_to  # type: ignore[method-assign]  # the replay patches placement onto the CPU on purpose
    torch.nn.Module.cuda = lambda self, *args, **kwargs: self  # type: ignore[method-assign]  # the replay patches placement onto the CPU on purpose
    torch.set_default_device = _redirect_positional(torch.set_default_device)


def _redirect_positional(function):
    def redirected(device, *args, **kwargs):
        return function(redirect_device(device), *args, **kwargs)

    return redirected


# ---------------------------------------------------------------- launch recording


def _relative(path: str | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).resolve().relative_to(STATE.root.resolve()).as_posix()
    except ValueError:
        return path


def _type_of(value: Any) -> str:
    from triton.runtime.jit import mangle_type

    try:
        return mangle_type(value)
    except Exception:  # noqa: BLE001 - an argument triton itself would reject; record its Python type
        return type(value).__name__


def _constexpr_names(fn) -> set[str]:
    annotations = getattr(fn, "__annotations__", {})
    return {name for name, value in annotations.items() if "constexpr" in str(value)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def describe_launch(fn, args: tuple, kwargs: dict) -> dict[str, Any]:
    """A JSON-able description of one launch of the interpreted function `fn`."""
    signature = inspect.signature(fn)
    params = list(signature.parameters)
    bound = signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    constexpr_names = _constexpr_names(fn)
    arg_types: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    shapes: dict[str, list[int]] = {}
    specialization: dict[str, str] = {}
    backend = _launcher_backend()
    for name, value in bound.arguments.items():
        if name in constexpr_names:
            constexprs[name] = _jsonable(getattr(value, "value", value))
            arg_types[name] = "constexpr"
            continue
        arg_types[name] = _type_of(value)
        spec = _specialized_as(backend, value)
        if spec:
            specialization[name] = spec
        if hasattr(value, "shape"):
            shapes[name] = list(value.shape)
    options = {k: _jsonable(v) for k, v in kwargs.items() if k not in params}
    options.setdefault("num_warps", 4)
    options.setdefault("num_stages", 3)
    return {
        "kernel": fn.__name__,
        "module": fn.__module__,
        "qualname": fn.__qualname__,
        "file": _relative(inspect.getsourcefile(fn)),
        "line": fn.__code__.co_firstlineno,
        "signature": arg_types,
        "specialization": specialization,
        "constexprs": constexprs,
        "shapes": shapes,
        "options": options,
    }


def _launcher_backend() -> Any:
    """The backend class whose argument specialization Triton's launcher applies on the (emulated) target."""
    from triton.backends.compiler import BaseBackend
    from triton.compiler import make_backend
    from triton.runtime import driver

    try:
        return type(make_backend(driver.active.get_current_target()))
    except Exception:  # noqa: BLE001 - no usable driver: divisibility alone, which every backend applies
        return BaseBackend


def _specialized_as(backend: Any, value: Any) -> str:
    """How Triton's launcher specializes one argument on the target: "D" for a pointer aligned to 16 bytes or an
    integer divisible by 16, "S" for a HIP buffer within 2 GB (buffer loads); "" for neither. The cross-compile passes
    these as the attributes a real launch compiles with: on gfx942 an aligned GEMM gets (num_stages - 1) LDS buffers,
    one without the hints a single one (bench/tune/amd_lds_alignment.py)."""
    from triton._C.libtriton import native_specialize_impl

    try:
        spec = native_specialize_impl(backend, value, False, True, True)[1]
    except Exception:  # noqa: BLE001 - an argument the launcher itself would reject: no hint
        return ""
    return spec if isinstance(spec, str) else ""


def _launch_key(record: dict[str, Any]) -> str:
    return json.dumps(launch_identity(record), sort_keys=True, default=str)


def _launch_site() -> tuple[str, int]:
    """The first frame outside Triton and porter: (file, line) of the call that launched the kernel."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename.replace(os.sep, "/")
        if "/triton/" not in filename and "/porter/verify/" not in filename:
            return _relative(frame.f_code.co_filename), frame.f_lineno
        frame = frame.f_back
    return "", 0


def _record_launch(record: dict[str, Any]) -> dict[str, Any]:
    key = _launch_key(record)
    site, line = _launch_site()
    with STATE.lock:
        kept = STATE.launches.setdefault(
            key, record | {"count": 0, "tests": [], "dot_dtypes": [], "sites": [], "site_lines": []}
        )
        kept["count"] += 1
        if site and site not in kept["sites"]:
            kept["sites"].append(site)
        if site and f"{site}:{line}" not in kept["site_lines"]:
            kept["site_lines"].append(f"{site}:{line}")
        if STATE.current_test and STATE.current_test not in kept["tests"]:
            kept["tests"].append(STATE.current_test)
        STATE.test_launch_keys.setdefault(STATE.current_test, set()).add(key)
    return kept


def _recorded(fn, launch, kwargs: dict, args: tuple):
    """Record one launch of the interpreted `fn`, then run it (`launch()`)."""
    options = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    if not kwargs.get("warmup"):
        STATE.current_launch = _record_launch(describe_launch(fn, args, options))
    try:
        return launch()
    finally:
        STATE.current_launch = None


def install_launch_recording() -> None:
    from triton.runtime import interpreter

    functions = interpreter.InterpretedFunction
    if "run" in functions.__dict__:
        _record_through_run_method(functions)
    else:
        _record_through_instances(functions)
    _record_dot_dtypes(interpreter)


def _record_through_run_method(functions) -> None:
    """Triton >= 3.6: `fn[grid](...)` and the autotuner both call InterpretedFunction.run."""
    original_run = functions.run

    def run(self, *args, grid, warmup, **kwargs):
        return _recorded(
            self.fn,
            lambda: original_run(self, *args, grid=grid, warmup=warmup, **kwargs),
            kwargs | {"warmup": warmup},
            args,
        )

    functions.run = run


def _record_through_instances(functions) -> None:
    """Triton 3.4/3.5: `run` is a closure each instance sets in __init__ (the autotuner calls it), and
    `fn[grid]` returns a GridExecutor directly: both are wrapped."""
    original_init = functions.__init__
    original_getitem = functions.__getitem__

    def init(self, fn, **kwargs):
        original_init(self, fn, **kwargs)
        instance_run = self.run
        self.run = lambda *args, **kw: _recorded(self.fn, lambda: instance_run(*args, **kw), kw, args)

    def getitem(self, grid):
        executor = original_getitem(self, grid)
        return lambda *args, **kw: _recorded(self.fn, lambda: executor(*args, **kw), kw, args)

    functions.__init__ = init
    functions.__getitem__ = getitem


def _record_dot_dtypes(interpreter) -> None:
    builder_class = type(interpreter.interpreter_builder)
    original_dot = builder_class.create_dot

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        launch = STATE.current_launch
        if launch is not None:
            for dtype in (str(a.dtype.scalar), str(b.dtype.scalar)):
                if dtype not in launch["dot_dtypes"]:
                    launch["dot_dtypes"].append(dtype)
        return original_dot(self, a, b, d, input_precision, max_num_imprecise_acc)

    builder_class.create_dot = create_dot


def pass_float_scalars_as_fp32() -> None:
    """Compiled Triton passes a Python float argument as an fp32 scalar (`x.to(tl.float32)` works on
    it); the interpreter passes the raw float, so such kernels would fail only on the CPU."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter._implicit_cvt

    def implicit_cvt(arg):
        if isinstance(arg, float):
            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    interpreter._implicit_cvt = implicit_cvt


def allow_target_dot_precisions(target) -> None:
    """Let the interpreter take the target's fp32 dot precisions (it computes in the operand dtype
    whatever the precision; what the target's compiler accepts is checked by cross-compilation)."""
    import dataclasses

    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    allowed = tuple(target.fp32_dot_precisions)
    default = builder.options.default_dot_input_precision
    if default not in allowed:
        default = "ieee"
    builder.options = dataclasses.replace(
        builder.options, allowed_dot_input_precisions=allowed, default_dot_input_precision=default
    )


# ---------------------------------------------------------------- autotune


class AutotuneDisagreement(AssertionError):
    """The configs of one autotune list computed different results for the same inputs."""


def _tensors_of(args: tuple, kwargs: dict) -> list:
    values = list(args) + list(kwargs.values())
    return [v for v in values if hasattr(v, "data_ptr") and hasattr(v, "clone")]


def _tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing two configs: accumulation order differs between block sizes."""
    import torch

    if not dtype.is_floating_point:
        return 0.0, 0.0
    if dtype == torch.float32 or dtype == torch.float64:
        return 1e-4, 1e-5
    if dtype in (torch.float16,):
        return 1e-2, 1e-3
    if dtype == torch.bfloat16:
        return 2e-2, 1e-2
    return 0.25, 0.25  # fp8: one step of the 3-bit mantissa is 12.5 %


def _first_mismatch(reference: list, outputs: list) -> str:
    import torch

    for index, (ref, out) in enumerate(zip(reference, outputs)):
        if ref.dtype != out.dtype or ref.shape != out.shape:
            return f"argument {index}: dtype/shape differ"
        rtol, atol = _tolerance(ref.dtype)
        a, b = ref.double(), out.double()
        if not torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            worst = (a - b).abs().nan_to_num(float("inf")).max().item()
            return f"tensor argument {index} differs (max abs diff {worst:.3g})"
    return ""


def _config_text(config) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.all_kwargs().items() if v is not None)


def install_autotune_replay() -> None:
    from triton.runtime import autotuner

    Autotuner = autotuner.Autotuner
    original_bench = Autotuner._bench
    original_run = Autotuner.run

    def bench(self, *args, config, **meta):
        _note_autotune(self)
        index = self.configs.index(config) if config in self.configs else len(self.configs)
        tensors = _tensors_of(args, meta)
        before = [t.clone() for t in tensors]
        # do_bench is a cached_property: the instance dict entry is what _bench reads.
        self.__dict__["do_bench"] = lambda kernel_call, quantiles: (kernel_call(), [float(index)] * len(quantiles))[1]
        try:
            timing = original_bench(self, *args, config=config, **meta)
        except Exception as error:
            error.add_note(f"porter: raised by autotune config {index} ({_config_text(config)})")
            raise
        finally:
            after = [t.clone() for t in tensors]
            for tensor, saved in zip(tensors, before):
                tensor.copy_(saved)  # every config starts from the same inputs
        self._porter_outputs.append((index, config, after))
        return timing

    def run(self, *args, **kwargs):
        self._porter_outputs = []
        result = original_run(self, *args, **kwargs)
        _check_agreement(self)
        return result

    Autotuner._bench = bench
    Autotuner.run = run


def _check_agreement(tuner) -> None:
    outputs = getattr(tuner, "_porter_outputs", [])
    name = getattr(tuner.base_fn, "__name__", "kernel")
    _note_autotune(tuner)
    if len(outputs) < 2:
        return
    ref_index, ref_config, reference = outputs[0]
    for index, config, produced in outputs[1:]:
        mismatch = _first_mismatch(reference, produced)
        if mismatch:
            detail = {
                "kernel": name,
                "config_index": index,
                "config": _config_text(config),
                "reference_index": ref_index,
                "reference": _config_text(ref_config),
                "detail": mismatch,
                "test": STATE.current_test,
            }
            STATE.autotune_disagreements.append(detail)
            raise AutotuneDisagreement(
                f"autotune configs of {name} disagree: config {index} ({detail['config']}) vs config "
                f"{ref_index} ({detail['reference']}): {mismatch}"
            )


def _note_autotune(tuner) -> None:
    """Remember the full config list of this kernel, for cross-compilation of every config."""
    base = tuner.base_fn
    configs = [{k: _jsonable(v) for k, v in c.all_kwargs().items() if v is not None} for c in tuner.configs]
    with STATE.lock:
        STATE.autotune_configs[f"{base.__module__}:{base.__qualname__}"] = configs


# ---------------------------------------------------------------- not-replayed classification


def _exception_chain(error: BaseException | None):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def not_replayed_reason(error: BaseException, test_id: str) -> str:
    """Why a failure comes from the emulation's limits rather than from the code, or ''."""
    for link in _exception_chain(error):
        text = str(link)
        lowered = text.lower()
        if isinstance(link, NotReplayable):
            return text
        if isinstance(link, NotImplementedError) and "inline_asm" in lowered:
            return "uses inline asm (tl.inline_asm_elementwise), which the Triton interpreter cannot run"
        if "inline_asm not supported" in lowered:
            return "uses inline asm (tl.inline_asm_elementwise), which the Triton interpreter cannot run"
        if _raised_in_libdevice(link) or "`_semantic` argument must be provided" in text:
            return (
                "calls a libdevice function, which the Triton interpreter cannot run (libdevice functions "
                "are stubs the compiler replaces per backend)"
            )
        if any(marker in lowered for marker in _NO_RUNTIME):
            return f"needs a CUDA runtime feature the CPU replay does not emulate: {text.splitlines()[0][:200]}"
    if _test_ran_bf16_dot(test_id):
        return BF16_DOT_ISSUE
    return ""


def _raised_in_libdevice(error: BaseException) -> bool:
    traceback = error.__traceback__
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename.replace(os.sep, "/")
        if "/triton/language/extra/" in filename:
            return True
        traceback = traceback.tb_next
    return False


def _test_ran_bf16_dot(test_id: str) -> bool:
    keys = STATE.test_launch_keys.get(test_id, set())
    return any("bf16" in STATE.launches[key]["dot_dtypes"] for key in keys if key in STATE.launches)


# ---------------------------------------------------------------- pytest hooks


def _target():
    from porter.targets import get_target

    name = os.environ.get("PORTER_EMULATE_TARGET", "mi350x")
    return get_target(name)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    """Emulate before the conftests run: a package they import may ask "is this AMD" at import time."""
    STATE.root = Path(str(early_config.rootpath))
    if os.environ.get("PORTER_REPLAY_TORCH") == "0":
        return  # the verifier saw no torch/triton import in the repository: nothing to redirect
    install_emulation(_target())


def install_emulation(target) -> None:
    import torch

    if os.environ.get("PORTER_REPLAY_DEVICE", "cpu") != "cpu":
        return  # a real device answers for itself
    install_device_redirection(target)
    install_torch(torch, target)
    install_platform_hooks(STATE.emulation_notes)
    if os.environ.get("TRITON_INTERPRET") == "1":
        install_triton(target, torch)
        install_launch_recording()
        install_autotune_replay()
        pass_float_scalars_as_fp32()
        allow_target_dot_precisions(target)


def pytest_runtest_setup(item) -> None:
    STATE.current_test = item.nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    TRACKER.test_started(item.nodeid)
    yield
    TRACKER.test_finished(item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or report.outcome != "failed" or call.when == "teardown":
        return
    reason = not_replayed_reason(call.excinfo.value, item.nodeid)
    if reason:
        STATE.not_replayed[item.nodeid] = reason
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, NOT_REPLAYED_PREFIX + reason)


def _output_path() -> Path | None:
    directory = os.environ.get("PORTER_REPLAY_DIR")
    if not directory:
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return Path(directory) / f"replay-{worker}-{os.getpid()}.json"


def pytest_sessionfinish(session, exitstatus) -> None:
    path = _output_path()
    if path is None:
        return
    for record in STATE.launches.values():
        configs = STATE.autotune_configs.get(f"{record['module']}:{record['qualname']}")
        if configs:
            record["autotune_configs"] = configs
    payload = {
        "launches": list(STATE.launches.values()),
        "not_replayed": STATE.not_replayed,
        "autotune_disagreements": STATE.autotune_disagreements,
        "imports": TRACKER.imports_by_test(STATE.root),
        "emulation_notes": STATE.emulation_notes,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
    os.replace(temporary, path)
