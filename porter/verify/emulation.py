"""Target emulation for the CPU replay: every way code asks "am I on AMD, which arch" answers as the target.

Installed by the replay plugin before the project's conftests import anything:

- torch: a ROCm build (`torch.version.hip`), one device with the target's properties (`gcnArchName`
  as the HIP runtime spells it, capability, CU count, LDS, wave size), `is_available()`, and
  `Tensor.is_cuda` true for the project's code (torch's own code keeps seeing the CPU tensor).
- CUDA-only context managers: `torch.cuda.device(...)`/`device_of` select the one emulated device,
  `torch.cuda.stream(...)`, `Stream` and `Event` order work as the CPU runs it (serially, which is
  one valid schedule). What cannot be answered honestly raises NotReplayable, which the plugin
  reports as "not replayed": event timings, CUDA graphs, memory statistics.
- Triton: the active driver is an emulated HIP driver whose `get_current_target()` is
  GPUTarget("hip", arch, 64) and whose `utils.get_device_properties()` has the HIP driver's keys.
- serving projects' platform objects (vLLM's `current_platform`): set to their ROCm platform
  when the project imports them (see `install_platform_hooks`).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from types import SimpleNamespace
from typing import Any, Literal

HIP_VERSION_DEFAULT = "6.4.0"


class NotReplayable(RuntimeError):
    """Raised by an emulated CUDA runtime function that cannot be answered honestly on the CPU."""


def _refuse(name: str):
    def refuse(*args, **kwargs):
        raise NotReplayable(f"torch.cuda.{name} is not emulated on the CPU")

    return refuse


# ---------------------------------------------------------------- facts


def gcn_arch_name(target) -> str:
    return target.extra.get("gcn_arch_name", target.arch) if target.is_amd else ""


def device_properties(target) -> SimpleNamespace:
    """What torch.cuda.get_device_properties returns on the target (the fields real code reads)."""
    major, minor = target.capability
    return SimpleNamespace(
        name=target.extra.get("product_name", target.name),
        major=major,
        minor=minor,
        multi_processor_count=target.units,
        total_memory=target.hbm_bytes,
        warp_size=target.wave_size,
        max_threads_per_block=target.max_threads_per_block,
        max_threads_per_multi_processor=target.max_threads_per_block * (target.waves_per_simd_max or 1),
        shared_memory_per_block=target.lds_bytes,
        shared_memory_per_block_optin=target.lds_bytes,
        shared_memory_per_multiprocessor=target.lds_bytes,
        L2_cache_size=target.l2_bytes or 0,
        gcnArchName=gcn_arch_name(target),
        is_integrated=0,
        is_multi_gpu_board=0,
        uuid="00000000-0000-0000-0000-000000000000",
        is_emulated=True,
    )


def triton_device_properties(target) -> dict[str, Any]:
    """What `driver.active.utils.get_device_properties(i)` returns on the target (HIP driver keys)."""
    return {
        "max_shared_mem": target.lds_bytes,
        "max_num_regs": target.registers.get("file_bytes_per_unit", 0) // 4,
        "multiprocessor_count": target.units,
        "sm_clock_rate": int(target.clock_ghz * 1e6),
        "mem_clock_rate": 0,
        "mem_bus_width": 0,
        "arch": gcn_arch_name(target) or target.arch,
        "warpSize": target.wave_size,
        "max_threads_per_sm": target.max_threads_per_block,
        "cooperativeLaunch": 1,
    }


# ---------------------------------------------------------------- torch


def install_torch(torch, target) -> None:
    """torch.version, torch.cuda's queries and context managers, Tensor.is_cuda: as on the target."""
    if target.is_amd and torch.version.hip is None:
        # What a ROCm build reports; the version porter emulates the target's stack at (env overrides).
        torch.version.hip = os.environ.get("PORTER_EMULATE_HIP_VERSION", HIP_VERSION_DEFAULT)
        torch.version.cuda = None
    _install_queries(torch.cuda, target)
    _install_context_managers(torch)
    _install_is_cuda(torch)


def _install_queries(cuda, target) -> None:
    properties = device_properties(target)
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.set_device = lambda device: None
    cuda.synchronize = lambda device=None: None
    cuda.empty_cache = lambda: None
    cuda.is_initialized = lambda: True
    cuda.init = lambda: None
    cuda.manual_seed = lambda seed: None  # torch.manual_seed already seeds the CPU generator
    cuda.manual_seed_all = lambda seed: None
    cuda.get_device_properties = lambda device=None: properties
    cuda.get_device_capability = lambda device=None: tuple(target.capability)
    cuda.get_device_name = lambda device=None: properties.name
    cuda.get_arch_list = lambda: [target.arch]
    for name in (
        "CUDAGraph",
        "graph",
        "make_graphed_callables",
        "mem_get_info",
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
        "memory_stats",
        "reset_peak_memory_stats",
    ):
        setattr(cuda, name, _refuse(name))


class _NoDevice:
    """`with torch.cuda.device(i)` / `device_of(t)`: there is one emulated device, already current."""

    def __init__(self, device: Any = None) -> None:
        self.idx = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> Literal[False]:
        return False


class EmulatedStream:
    """A stream on the CPU: work runs in program order as it is issued, so waits and syncs are met."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs) -> None:
        self.device = "cpu"
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self) -> None:
        return None

    def wait_stream(self, stream) -> None:
        return None

    def wait_event(self, event) -> None:
        return None

    def record_event(self, event=None):
        return event if event is not None else EmulatedEvent()

    def query(self) -> bool:
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> Literal[False]:
        return False


class EmulatedEvent:
    """An event on the CPU: ordering is met by construction; timings are refused (not replayed)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing

    def record(self, stream=None) -> None:
        return None

    def wait(self, stream=None) -> None:
        return None

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def elapsed_time(self, end) -> float:
        raise NotReplayable("torch.cuda.Event.elapsed_time: GPU timings cannot be measured on the CPU")


def _install_context_managers(torch) -> None:
    cuda = torch.cuda
    default = EmulatedStream()
    cuda.device = _NoDevice
    cuda.device_of = _NoDevice
    cuda.Stream = EmulatedStream
    cuda.ExternalStream = EmulatedStream
    cuda.Event = EmulatedEvent
    cuda.current_stream = lambda device=None: default
    cuda.default_stream = lambda device=None: default
    cuda.set_stream = lambda stream: None
    cuda.stream = lambda stream=None: stream if stream is not None else _NoDevice()
    cuda.StreamContext = lambda stream=None: stream if stream is not None else _NoDevice()


def _install_is_cuda(torch) -> None:
    """`t.is_cuda` is True in the project's code (the CPU stands in for the emulated GPU) and what it
    really is inside torch, whose own code would take CUDA-only paths on a CPU tensor."""
    real = torch.Tensor.is_cuda
    torch_dir = os.path.dirname(torch.__file__) + os.sep

    def is_cuda(self) -> bool:
        caller = sys._getframe(1).f_code.co_filename
        if caller.startswith(torch_dir):
            return real.__get__(self)
        return self.device.type in ("cpu", "cuda")

    torch.Tensor.is_cuda = property(is_cuda)


# ---------------------------------------------------------------- triton


class _EmulatedUtils:
    def __init__(self, target) -> None:
        self._properties = triton_device_properties(target)

    def get_device_properties(self, device: Any = 0) -> dict[str, Any]:
        return dict(self._properties)


class EmulatedDriver:
    """Triton's active driver as the target's driver reports it (HIP on AMD targets), with no GPU behind it."""

    def __init__(self, target, torch) -> None:
        from triton.backends.compiler import GPUTarget

        self._torch = torch
        self._target = GPUTarget(target.triton["backend"], target.triton["arch"], target.wave_size)
        self.utils = _EmulatedUtils(target)
        self.get_device_capability = torch.cuda.get_device_capability
        self.get_current_device = lambda: 0
        self.set_current_device = lambda device: None
        self.get_current_stream = lambda device=None: 0

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self):
        return self._target

    def get_active_torch_device(self):
        return self._torch.device("cpu")  # the device the replay's tensors live on

    def get_device_interface(self):
        return self._torch.cuda

    def get_benchmarker(self):
        def run_once(kernel_call, quantiles=None, **kwargs):
            kernel_call()
            return [0.0] * len(quantiles) if quantiles else 0.0  # no timing on the CPU: every config ties

        return run_once

    def get_empty_cache_for_benchmark(self):
        return self._torch.empty(0, dtype=self._torch.int)

    def clear_cache(self, cache) -> None:
        cache.zero_()

    def map_python_to_cpp_type(self, ty: str) -> str:
        raise NotReplayable("Triton's launcher C types: no GPU launcher on the CPU")


def install_triton(target, torch) -> None:
    """Make the emulated driver Triton's active one (triton.runtime.driver.active)."""
    from triton.runtime import driver

    driver.set_active(EmulatedDriver(target, torch))


# ---------------------------------------------------------------- serving projects' platform objects


def _vllm_rocm(module) -> None:
    """vLLM resolves `current_platform` lazily (module __getattr__ over `_current_platform`), older
    releases at import: either way it becomes the ROCm platform."""
    from vllm.platforms.rocm import RocmPlatform  # the project's own vLLM

    platform = RocmPlatform()
    module._current_platform = platform
    module.current_platform = platform


PLATFORM_HOOKS = {"vllm.platforms": _vllm_rocm}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a fix-up right after one of PLATFORM_HOOKS' modules is executed."""

    def __init__(self, hooks: dict, notes: list[str]) -> None:
        self.hooks, self.notes = hooks, notes

    def find_spec(self, name, path=None, target=None):
        if name not in self.hooks:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _HookedLoader(spec.loader, self.hooks[name], self.notes)
        return spec


class _HookedLoader(importlib.abc.Loader):
    def __init__(self, loader, hook, notes: list[str]) -> None:
        self.loader, self.hook, self.notes = loader, hook, notes

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        try:
            self.hook(module)
        except Exception as error:  # noqa: BLE001 - the project's platform class refused: say so, keep its own
            self.notes.append(f"{module.__name__}: platform object not emulated ({type(error).__name__}: {error})")


def install_platform_hooks(notes: list[str]) -> None:
    """Emulate the platform objects of serving projects when (and if) the project imports them."""
    for name, hook in PLATFORM_HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])
    sys.meta_path.insert(0, _AfterImport(PLATFORM_HOOKS, notes))
