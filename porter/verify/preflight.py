"""Before verifying: can the replay run at all? A missing tool is an environment fault, not a verdict.

The test replay needs pytest (for porter's plugin), and for a repository that imports torch or
Triton also numpy, torch and triton, in the interpreter that runs the tests; cross-compilation needs
Triton's AMD backend in porter's own interpreter. A failed check stops the run once, with the fix.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from porter.errors import PorterError
from porter.targets import Target
from porter.verify.options import VerifyOptions
from porter.verify.runner import is_pytest
from porter.verify.selection import imports_any

GPU_EXTRA_FIX = "python -m pip install 'porter[gpu]'"
_PROBE = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        found[name] = ""
    except BaseException as error:
        found[name] = (type(error).__name__ + ": " + str(error)).splitlines()[0][:200]
print(json.dumps(found))
"""
# What GPU the test interpreter's torch sees: --device cuda verifies on it, so it must be the target.
_GPU_PROBE = """
import json
import torch
found = {"available": torch.cuda.is_available(), "hip": bool(torch.version.hip)}
if found["available"]:
    props = torch.cuda.get_device_properties(0)
    found.update(name=props.name, arch=getattr(props, "gcnArchName", ""), capability=[props.major, props.minor])
print(json.dumps(found))
"""


class VerifierUnavailable(PorterError):
    """The verifier cannot run here (a missing dependency, a broken test command): exit 2, nothing applied."""


@dataclass(frozen=True)
class Requirement:
    module: str
    why: str


def requirements(repo: Path, options: VerifyOptions) -> tuple[list[Requirement], list[Requirement]]:
    """(what the test interpreter needs, what porter's interpreter needs) for this repository."""
    tests: list[Requirement] = []
    if not options.test_cmd or is_pytest(list(options.test_cmd)):
        tests.append(Requirement("pytest", "porter replays the tests through a pytest plugin"))
    own: list[Requirement] = []
    if imports_any(repo, ("torch", "triton")):
        tests += [
            Requirement("numpy", "Triton's interpreter (TRITON_INTERPRET=1) needs it"),
            Requirement("torch", "the repository imports torch or triton"),
            Requirement("triton", "the kernels replay under Triton's interpreter"),
        ]
        if options.cross_compile and options.device == "cpu":
            own.append(Requirement("triton.backends.amd", "kernels are cross-compiled for the target's gfx arch"))
    return tests, own


def test_interpreter(options: VerifyOptions) -> str | None:
    """The Python that runs the tests (porter's own unless test_cmd names another); None: an opaque command."""
    command = list(options.test_cmd)
    if not command or command[0] in ("python", "python3"):
        return sys.executable
    head = Path(command[0]).name
    return command[0] if head.startswith("python") else None


def check(repo: Path, options: VerifyOptions, target: Target) -> None:
    """Raise VerifierUnavailable with the exact fix when something the replay needs is missing, or when
    --device cuda would run the tests on a GPU that is not the target (or on none)."""
    tests, own = requirements(repo, options)
    interpreter = test_interpreter(options)
    if options.device != "cpu" and all(r.module != "torch" for r in tests):
        tests.append(Requirement("torch", "--device cuda asks torch which GPU runs the tests"))
    for python, needed in ((interpreter, tests), (sys.executable, own)):
        if python is None or not needed:
            continue
        missing = _missing(python, [r.module for r in needed])
        if missing:
            raise VerifierUnavailable(_message(python, needed, missing))
    if options.device != "cpu":
        mismatch = gpu_mismatch(_gpu(interpreter or sys.executable), target)
        if mismatch:
            raise VerifierUnavailable(f"cannot verify on the GPU: {mismatch}")


def _gpu(python: str) -> dict:
    found, failure = _probe(python, _GPU_PROBE)
    return found if found is not None else {"available": False, "error": failure}


def _probe(python: str, script: str, *args: str) -> tuple[dict | None, str]:
    """Run `script` in the test interpreter: (its last line of JSON, "") or (None, why there is no answer)."""
    try:
        done = subprocess.run([python, "-c", script, *args], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"cannot run {python}: {error}"
    try:
        return json.loads(done.stdout.strip().splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, f"{python} did not answer: {(done.stderr.strip().splitlines() or ['?'])[-1]}"


def gpu_mismatch(gpu: dict, target: Target) -> str:
    """Why the GPU torch reports (the probe's answer) is not `target`; "" when it is. ROCm torch names the gfx
    arch (gcnArchName "gfx942:sramecc+:xnack-"); CUDA torch gives the compute capability."""
    cpu_fix = f"use --device cpu to replay the tests with {target.name} emulated and its kernels cross-compiled"
    if not gpu.get("available"):
        why = gpu.get("error") or "torch.cuda.is_available() is False"
        return f"no GPU is visible to the test interpreter ({why}): {cpu_fix}"
    arch = str(gpu.get("arch") or "").split(":")[0]
    capability = tuple(gpu.get("capability") or ())
    if gpu.get("hip"):
        same = target.is_amd and arch == target.arch
        seen = f"{gpu.get('name')} ({arch or 'gfx arch unknown'})"
    else:
        same = not target.is_amd and capability == tuple(target.capability)
        seen = f"{gpu.get('name')} (capability {'.'.join(map(str, capability))})"
    if same:
        return ""
    return f"the GPU here is {seen}, not {target.name} ({target.arch}): pass the --target of this GPU, or {cpu_fix}"


def _missing(python: str, modules: list[str]) -> dict[str, str]:
    found, failure = _probe(python, _PROBE, *modules)
    if found is None:
        return {modules[0]: failure}
    return {name: error for name, error in found.items() if error}


def _message(python: str, needed: list[Requirement], missing: dict[str, str]) -> str:
    names = [r.module for r in needed if r.module in missing]
    first = next(r for r in needed if r.module in missing)
    own = python == sys.executable
    fix = GPU_EXTRA_FIX if own else f"{python} -m pip install {' '.join(sorted({n.split('.')[0] for n in names}))}"
    return (
        f"cannot verify: {', '.join(names)} not importable by {python} ({first.why}; {missing[first.module]}); "
        f"fix: {fix} (or `porter rewrite --no-verify` for unverified patches only)"
    )
