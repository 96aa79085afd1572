"""Cross-compile recorded kernel launches for the target with Triton's own backend, on this CPU.

Each job is one (kernel, signature, constexprs, options) seen in the replay, plus every config of
the autotune lists the replay met. Jobs run in worker subprocesses (`python -m
porter.verify.crosscompile JOBS.json`) with a timeout, a few in parallel, and are cached by the
kernel's package sources + signature + options + arch + Triton version. The resource figures come
from the compiled kernel itself (metadata.shared, the amdgcn text), never from a formula.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import Any

from porter.records import CompileRecord
from porter.targets import Target
from porter.verify.protocol import launch_identity
from porter.verify.workspace import project_import_paths

_OPTION_KEYS = (
    "num_warps",
    "num_stages",
    "num_ctas",
    "waves_per_eu",
    "matrix_instr_nonkdim",
    "kpack",
    "maxnreg",
    "schedule_hint",
)


# ---------------------------------------------------------------- jobs from the replay


def jobs_from_launches(launches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One compile job per distinct launch and per config of each autotune list seen."""
    jobs: dict[str, dict[str, Any]] = {}
    for launch in launches:
        base = {k: launch[k] for k in ("kernel", "module", "qualname", "file", "signature")}
        base["specialization"] = production_specialization(launch)
        base["sites"] = list(launch.get("sites", []))
        base["site_lines"] = list(launch.get("site_lines", []))
        base["line"] = int(launch.get("line") or 0)
        base["tests"] = list(launch.get("tests", []))
        _add_job(jobs, base, dict(launch["constexprs"]), dict(launch["options"]))
        for config in launch.get("autotune_configs") or []:
            constexprs = dict(launch["constexprs"])
            options = {"num_warps": 4, "num_stages": 3}
            for key, value in config.items():
                if launch["signature"].get(key) == "constexpr":
                    constexprs[key] = value
                else:
                    options[key] = value
            _add_job(jobs, base, constexprs, options)
    return list(jobs.values())


def production_specialization(launch: dict[str, Any]) -> dict[str, str]:
    """The argument specialization a launch compiles with on production shapes: pointers as the replay saw them
    (16-byte aligned: "D"; a HIP buffer within 2 GB: "S"), every integer divisible by 16 ("D"), as the sizes and
    strides of real GEMMs are. Tests often pick odd sizes to exercise masks, and vary them from run to run: compiled
    as they come, a gfx942 GEMM gets one LDS buffer instead of num_stages - 1 and a before/after comparison sees two
    different kernels."""
    spec = {name: value for name, value in (launch.get("specialization") or {}).items() if name in launch["signature"]}
    for name, kind in launch["signature"].items():
        if kind[:1] in ("i", "u") and kind != "i1":
            spec[name] = "D"
    return spec


def _add_job(jobs: dict, base: dict, constexprs: dict, options: dict) -> None:
    options = {k: v for k, v in options.items() if k in _OPTION_KEYS and v is not None}
    job = base | {"constexprs": constexprs, "options": options}
    key = json.dumps(launch_identity(job), sort_keys=True)
    jobs.setdefault(key, job)


# ---------------------------------------------------------------- cache


def _package_digest(root: Path, file: str) -> str:
    """Hash of every .py file of the kernel's top-level package (or of the file alone)."""
    digest = hashlib.sha256()
    path = root / file
    top = Path(file).parts[0] if len(Path(file).parts) > 1 else None
    files = sorted((root / top).rglob("*.py")) if top and (root / top).is_dir() else [path]
    for item in files:
        try:
            digest.update(item.relative_to(root).as_posix().encode())
            digest.update(item.read_bytes())
        except OSError:
            continue
    return digest.hexdigest()


def _cache_key(root: Path, job: dict, target: Target, triton_version: str) -> str:
    text = json.dumps(
        [_package_digest(root, job["file"]), *launch_identity(job), target.triton_target, triton_version],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _triton_version() -> str:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:  # noqa: BLE001 - not installed: the worker will say so
        return "unknown"


# ---------------------------------------------------------------- records


def compile_records(
    root: Path,
    launches: list[dict[str, Any]],
    target: Target,
    *,
    jobs: int = 2,
    timeout_s: float = 180.0,
    cache_dir: Path | None = None,
) -> list[CompileRecord]:
    """A CompileRecord per distinct launch and autotune config the replay recorded."""
    return compile_jobs(root, jobs_from_launches(launches), target, jobs=jobs, timeout_s=timeout_s, cache_dir=cache_dir)


def compile_jobs(
    root: Path,
    work: list[dict[str, Any]],
    target: Target,
    *,
    jobs: int = 2,
    timeout_s: float = 180.0,
    cache_dir: Path | None = None,
    on_done: Callable[[CompileRecord], None] | None = None,
) -> list[CompileRecord]:
    """CompileRecords for every job, in order; cached results are reused, the rest compiled in subprocesses.
    `on_done(record)` is called in this thread as each job's record is ready (a chunk's jobs together)."""
    version = _triton_version()
    results: dict[int, dict[str, Any]] = {}
    pending: list[tuple[int, str]] = []
    for index, job in enumerate(work):
        key = _cache_key(root, job, target, version)
        cached = _cache_read(cache_dir, key)
        if cached is not None:
            results[index] = cached | {"cached": True}
            if on_done is not None:
                on_done(to_record(job, results[index], target))
        else:
            pending.append((index, key))
    chunks = [pending[i :: max(1, jobs)] for i in range(max(1, jobs))]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running = {
            pool.submit(_run_chunk, root, [work[i] for i, _ in chunk], target, timeout_s): chunk for chunk in chunks
        }
        for future in as_completed(running):
            for (index, key), result in zip(running[future], future.result()):
                results[index] = result
                if result.get("cacheable"):
                    _cache_write(cache_dir, key, result)
                if on_done is not None:
                    on_done(to_record(work[index], result, target))
    return [to_record(work[i], results[i], target) for i in range(len(work))]


def _run_chunk(root: Path, chunk: list[dict], target: Target, timeout_s: float) -> list[dict[str, Any]]:
    if not chunk:
        return []
    with tempfile.TemporaryDirectory(prefix="porter-compile-") as scratch:
        job_file = Path(scratch) / "jobs.json"
        out_file = Path(scratch) / "results.jsonl"
        job_file.write_text(
            json.dumps({"target": list(target.triton_target), "target_name": target.name, "jobs": chunk}),
            encoding="utf-8",
        )
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        env["PORTER_EMULATE_TARGET"] = target.name
        env["PYTHONPATH"] = os.pathsep.join(project_import_paths(root) + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        env["TRITON_ALWAYS_COMPILE"] = "1"  # a Triton cache hit would hide LLVM errors printed on stderr
        env["TRITON_CACHE_DIR"] = str(Path(scratch) / "triton-cache")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        problem = ""
        try:
            done = subprocess.run(
                [sys.executable, "-m", "porter.verify.crosscompile", str(job_file), str(out_file)],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout_s * len(chunk),
            )
            if done.returncode != 0:
                problem = f"compile worker exited with status {done.returncode}: {_last_line(done.stderr)}"
        except subprocess.TimeoutExpired:
            problem = f"compile timed out (limit {timeout_s:g} s per kernel)"
        lines = out_file.read_text(encoding="utf-8").splitlines() if out_file.is_file() else []
        results = [json.loads(line) for line in lines if line.strip()]
    while len(results) < len(chunk):
        results.append(
            {
                "ok": False,
                "error": problem or "compile worker produced no result",
                "cacheable": False,
                "unchecked": True,
            }
        )
    return results


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _cache_read(cache_dir: Path | None, key: str) -> dict | None:
    if cache_dir is None:
        return None
    path = cache_dir / f"{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _cache_write(cache_dir: Path | None, key: str, result: dict) -> None:
    if cache_dir is None:
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    ignore = cache_dir / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    temporary = cache_dir / f"{key}.tmp"
    temporary.write_text(json.dumps(result), encoding="utf-8")
    os.replace(temporary, cache_dir / f"{key}.json")


def to_record(job: dict, result: dict, target: Target) -> CompileRecord:
    config = dict(job["constexprs"]) | dict(job["options"])
    record = CompileRecord(
        kernel=job["qualname"],
        config=config,
        arch=target.arch,
        ok=bool(result.get("ok")),
        error=result.get("error", ""),
        source=job["file"],
        signature=dict(job["signature"]),
        cached=bool(result.get("cached")),
        launch_site=(job.get("site_lines") or [""])[0],
        kernel_line=int(job.get("line") or 0),
        tests=list(job.get("tests", [])),
        checked=not result.get("unchecked"),
    )
    if not record.ok:
        record.launchable = False
        return record
    warps = int(job["options"].get("num_warps", 4))
    record.vgprs, record.sgprs = result.get("vgprs"), result.get("sgprs")
    record.spills, record.occupancy = result.get("spills"), result.get("occupancy")
    record.lds_bytes, record.lds_limit = result.get("shared"), target.lds_bytes
    record.threads, record.thread_limit = warps * target.wave_size, target.max_threads_per_block
    record.notes.extend(result.get("notes", []))
    if record.lds_bytes is not None and record.lds_bytes > record.lds_limit:
        record.launchable = False
        record.notes.append(
            f"LDS {record.lds_bytes} B over the {target.name} limit of {record.lds_limit} B "
            f"({record.lds_bytes / 1024:g} KiB > {record.lds_limit / 1024:g} KiB): fails at launch"
        )
    if record.threads > record.thread_limit:
        record.launchable = False
        record.notes.append(
            f"num_warps={warps} x {target.wave_size} lanes = {record.threads} threads, over the "
            f"{target.name} limit of {record.thread_limit}: fails at launch"
        )
    if record.spills:
        record.notes.append(f"{record.spills} register spills (scratch {result.get('scratch', 0)} B): slow, not wrong")
    return record


def failure_parts(record: CompileRecord) -> tuple[str, str, str] | None:
    """(kernel location, config, why it would not run on the target), or None when it would or when the compile
    could not finish (no evidence, see `unchecked_compiles`)."""
    if not record.checked:
        return None
    where = f"{record.source}::{record.kernel}" if record.source else record.kernel
    config = ", ".join(f"{k}={v}" for k, v in record.config.items())
    dtypes = pointer_dtypes(record)
    config = f"{dtypes}: {config}" if dtypes else config
    if not record.ok:
        return where, config, f"does not compile for {record.arch}: {record.error}"
    if not record.launchable:
        return where, config, f"would fail at launch on {record.arch}: {'; '.join(record.notes)}"
    return None


def compile_outcome(record: CompileRecord) -> str:
    """A compile in a few words: "ok", "fails: <why it would not run>" (a compile error or a launch the
    target refuses, such as LDS past the limit) or "not checked: <why it could not finish>"."""
    if not record.checked:
        return f"not checked: {record.error}"
    parts = failure_parts(record)
    return f"fails: {parts[2]}" if parts else "ok"


def pointer_dtypes(record: CompileRecord) -> str:
    """The element types of the kernel's pointer arguments ("fp16", "fp32+fp8e4nv"): which launch it was."""
    seen: list[str] = []
    for kind in record.signature.values():
        if kind.startswith("*") and kind[1:] not in seen:
            seen.append(kind[1:])
    return "+".join(seen)


def record_failure(record: CompileRecord) -> str:
    """One line saying why a kernel would not run on the target ('' when it would)."""
    parts = failure_parts(record)
    return f"{parts[0]} [{parts[1]}] {parts[2]}" if parts else ""


def grouped_failures(records: list[CompileRecord], prefix: str = "") -> list[str]:
    """One line per kernel and reason; several configs failing the same way are counted, one shown."""
    groups: dict[tuple[str, str], list[str]] = {}
    for record in records:
        parts = failure_parts(record)
        if parts:
            groups.setdefault((parts[0], parts[2]), []).append(parts[1])
    lines = []
    for (where, why), configs in groups.items():
        shown = f"[{configs[0]}]" if len(configs) == 1 else f"({len(configs)} launches/configs, e.g. [{configs[0]}])"
        lines.append(f"{prefix}{where} {shown} {why}")
    return lines


def unchecked_compiles(records: list[CompileRecord]) -> str:
    """Why some compiles are no evidence (they could not finish), with what to set; "" when all finished."""
    unchecked = [record for record in records if not record.checked]
    if not unchecked:
        return ""
    first = unchecked[0]
    return (
        f"{len(unchecked)} kernel compile(s) for {first.arch} could not finish, e.g. {first.source}::{first.kernel}: "
        f"{first.error}; raise [tool.porter.verify] compile_timeout"
    )


def records_to_dicts(records: list[CompileRecord]) -> list[dict]:
    return [asdict(r) for r in records]


# ---------------------------------------------------------------- worker (a subprocess)


def _amdgcn_figures(asm: str) -> dict[str, int | None]:
    def find(pattern: str) -> int | None:
        match = re.search(pattern, asm)
        return int(match.group(1)) if match else None

    vgpr_spills = find(r"\.vgpr_spill_count:\s*(\d+)") or 0
    sgpr_spills = find(r"\.sgpr_spill_count:\s*(\d+)") or 0
    return {
        "vgprs": find(r"\.vgpr_count:\s*(\d+)"),
        "sgprs": find(r"\.sgpr_count:\s*(\d+)"),
        "spills": vgpr_spills + sgpr_spills,
        "occupancy": find(r";\s*Occupancy:\s*(\d+)"),
        "scratch": find(r";\s*ScratchSize:\s*(\d+)"),
    }


def import_root(file: str, module: str) -> str | None:
    """The folder (relative to the repository) the kernel's module was imported from: "" for a flat
    layout, "src" for a src layout, "tests" for a kernel in a test file pytest imported by its
    rootdir; None when the module name does not match the file."""
    parts = list(PurePosixPath(file).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    names = module.split(".")
    if not file or len(parts) < len(names) or parts[len(parts) - len(names) :] != names:
        return None
    return "/".join(parts[: len(parts) - len(names)])


def _import_module(module: str, file: str):
    """Import the kernel's module as the replay did: from its import root (src layouts, namespace
    packages, test folders pytest put on sys.path), else from the repository root."""
    import importlib

    root = import_root(file, module)
    folder = str(Path.cwd() / root) if root else os.getcwd()
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(module)


def _load_kernel(module: str, qualname: str, file: str = ""):
    obj: Any = _import_module(module, file)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    from triton.runtime.jit import JITFunction

    while not isinstance(obj, JITFunction):
        if not hasattr(obj, "fn"):
            raise TypeError(f"{module}.{qualname} is not a Triton kernel")
        obj = obj.fn
    return obj


def _short_error(error: BaseException) -> str:
    """The compiler's reason in one line: where in the kernel (Triton's "at L:C:") and the cause."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    where = lines[0].rstrip(":") if lines and re.match(r"^at \d+:\d+:?$", lines[0]) else ""
    cause = error.__cause__
    reason = (
        str(cause).strip().splitlines()[-1]
        if cause is not None and str(cause).strip()
        else (lines[-1] if lines else type(error).__name__)
    )
    kind = type(cause or error).__name__
    text = f"{kind}: {reason}" + (f" ({where} of the kernel)" if where else "")
    return text[:600]


class _CapturedNativeOutput:
    """Capture what LLVM writes to fds 1 and 2: the AMDGPU backend reports some errors (an inline
    asm constraint it cannot satisfy) there and still returns a code object."""

    def __enter__(self):
        self.file = tempfile.TemporaryFile(mode="w+b")
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()
        return False

    def errors(self) -> list[str]:
        return sorted({line.strip() for line in self.text.splitlines() if line.strip().startswith("error:")})


def compile_one(job: dict, target: tuple) -> dict[str, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    try:
        fn = _load_kernel(job["module"], job["qualname"], job.get("file", ""))
    except Exception as error:  # noqa: BLE001 - any import failure is reported, not raised
        # the replay imported it to launch the kernel: failing here is the compile worker's environment
        error_text = f"cannot import {job['module']}: {_short_error(error)}"
        return {"ok": False, "error": error_text, "cacheable": False, "unchecked": True}
    backend, arch, warp = target
    try:
        gpu = GPUTarget(backend, arch, warp)
        source = ASTSource(fn, dict(job["signature"]), dict(job["constexprs"]), _attributes(job, gpu))
        with _CapturedNativeOutput() as native:
            kernel = triton.compile(source, target=gpu, options=dict(job["options"]))
    except Exception as error:  # noqa: BLE001 - the compiler's error is the result
        return {"ok": False, "error": _short_error(error), "cacheable": True}
    if native.errors():
        inline_asm = "elementwise_inline_asm" in kernel.asm.get("ttir", "")
        hint = "inline asm the target's assembler rejects: " if inline_asm else "LLVM backend error: "
        return {"ok": False, "error": hint + "; ".join(native.errors())[:500], "cacheable": True}
    result: dict[str, Any] = {"ok": True, "shared": int(getattr(kernel.metadata, "shared", 0) or 0), "cacheable": True}
    if "amdgcn" in kernel.asm:
        result.update(_amdgcn_figures(kernel.asm["amdgcn"]))
    return result


def _attributes(job: dict, gpu: Any) -> dict[tuple[int, ...], list]:
    """The argument attributes the launch was specialized with (replay_plugin._specialized_as), as the target's
    backend spells them: `tt.divisibility` 16, on HIP `tt.pointer_range` 32."""
    from triton.compiler import make_backend

    parse = make_backend(gpu).parse_attr
    names = list(job["signature"])
    return {
        (names.index(name),): parse(spec) for name, spec in (job.get("specialization") or {}).items() if name in names
    }


def _emulate(target_name: str) -> None:
    """Module-level code of the kernel's package that asks "is this AMD" answers as in the replay."""
    import torch

    from porter.targets import get_target
    from porter.verify.emulation import install_torch, install_triton

    target = get_target(target_name)
    install_torch(torch, target)
    install_triton(target, torch)


def _assemble_without_linking() -> str:
    """Triton 3.4 links the AMD code object with ROCm's ld.lld (later versions link in-process). Where
    that linker is absent, assemble the AMDGCN (the assembler still rejects what the target cannot run)
    and skip the link, which adds no figure porter reads; returns a note saying so, or ''."""
    from triton.backends.amd.compiler import HIPBackend

    if not hasattr(HIPBackend, "path_to_rocm_lld"):
        return ""
    try:
        HIPBackend.path_to_rocm_lld()
        return ""
    except Exception:  # noqa: BLE001 - Triton raises a bare Exception when no ld.lld is found
        pass
    import triton
    from triton._C.libtriton import amd

    HIPBackend.hash = lambda self: f"{triton.__version__}-unlinked-{self.target}"
    HIPBackend.make_hsaco = staticmethod(lambda src, metadata, options: amd.assemble_amdgcn(src, options.arch, ""))
    return f"Triton {triton.__version__}: no ROCm ld.lld here, so the code object was assembled but not linked"


def _worker(job_file: str, out_file: str) -> int:
    payload = json.loads(Path(job_file).read_text(encoding="utf-8"))
    target = tuple(payload["target"])
    _emulate(payload["target_name"])
    link_note = _assemble_without_linking()
    with open(out_file, "a", encoding="utf-8") as out:
        for job in payload["jobs"]:
            result = compile_one(job, target)
            if link_note:
                result["notes"] = [link_note]
            out.write(json.dumps(result) + "\n")
            out.flush()  # what is done survives a timeout of a later job
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    sys.exit(_worker(sys.argv[1], sys.argv[2]))
