"""Run the test command once in the workspace and read its results (JUnit XML, replay JSON)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter.records import TestRun
from porter.secrets import without_secrets
from porter.verify.isolation import TOKEN_VARIABLE, become_subreaper, hand_over, isolation_for, kill_run
from porter.verify.options import VerifyOptions
from porter.verify.protocol import NOT_REPLAYED_PREFIX
from porter.verify.workspace import project_import_paths

PLUGIN = "porter.verify.replay_plugin"


@dataclass
class ReplayLog:
    """What the replay plugin recorded during one run (merged over xdist workers)."""

    launches: list[dict[str, Any]] = field(default_factory=list)
    not_replayed: dict[str, str] = field(default_factory=dict)
    autotune_disagreements: list[dict[str, Any]] = field(default_factory=list)
    imports: dict[str, list[str]] = field(default_factory=dict)  # test id -> repository files it imported


@dataclass
class RunResult:
    run: TestRun
    replay: ReplayLog
    problem: str = ""  # the command could not start, timed out or produced no results


def is_pytest(command: list[str]) -> bool:
    head = [Path(part).name for part in command[:3]]
    return "pytest" in head or any(name.startswith("py.test") for name in head)


def _xdist_available() -> bool:
    return importlib.util.find_spec("xdist") is not None


def build_command(options: VerifyOptions, test_files: list[str] | None, junit: Path) -> list[str]:
    """The test command with porter's additions: JUnit output, the replay plugin, xdist, selection."""
    command = list(options.test_cmd) or [sys.executable, "-m", "pytest"]
    if command[0] in ("python", "python3"):
        command[0] = sys.executable  # the interpreter porter runs in, whose environment has the tools
    if not is_pytest(command):
        return command  # an opaque command: judged by its exit status alone
    command += ["-p", PLUGIN, f"--junitxml={junit}", "-o", "junit_family=xunit2", "-p", "no:cacheprovider", "-q"]
    if options.jobs != 0 and _xdist_available():
        command += ["-n", str(options.jobs)]
    if test_files and not _names_tests(command, bool(options.test_cmd)):
        command += test_files
    return command


def _names_tests(command: list[str], custom: bool) -> bool:
    """A custom pytest command that already names test paths keeps them (no selection added)."""
    if not custom:
        return False
    start = command.index("pytest") + 1 if "pytest" in command else 1
    return any(
        not part.startswith("-") and (part.endswith(".py") or "/" in part or "::" in part) for part in command[start:]
    )


def _environment(root: Path, options: VerifyOptions, target_name: str, replay_dir: Path, home: Path) -> dict[str, str]:
    """porter's environment without its secrets, HOME in the scratch directory, and the replay settings."""
    env = without_secrets(dict(os.environ))
    paths = project_import_paths(root) + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["HOME"] = str(home)  # `git config --global` and dot-file caches land in the scratch directory
    env["PORTER_REPLAY_DIR"] = str(replay_dir)
    env["PORTER_REPLAY_DEVICE"] = options.device
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if options.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["PORTER_EMULATE_TARGET"] = target_name
    else:
        env.pop("TRITON_INTERPRET", None)
        env.pop("PORTER_EMULATE_TARGET", None)
    env.update(without_secrets(dict(options.extra_env)))
    return env


def _tail(text: str, limit: int = 4000) -> str:
    return text[-limit:]


def run_tests(root: Path, options: VerifyOptions, target_name: str, test_files: list[str] | None) -> RunResult:
    """Run the tests once, confined (porter.verify.isolation); never raises for a command that
    fails, hangs or cannot start, and leaves none of the processes it started behind."""
    isolation = isolation_for(sys.executable)
    if isolation.uid is not None and root.stat().st_uid != isolation.uid:
        isolation = isolation_for(sys.executable, drop_root=False)  # not a copy made for the test user
    with tempfile.TemporaryDirectory(prefix="porter-run-") as scratch:
        scratch_dir = Path(scratch)
        junit = scratch_dir / "junit.xml"
        replay_dir = scratch_dir / "replay"
        (scratch_dir / "home").mkdir()
        command = build_command(options, test_files, junit)
        env = _environment(root, options, target_name, replay_dir, scratch_dir / "home")
        hand_over(isolation, scratch_dir)
        start = time.monotonic()
        output, returncode, problem, timed_out = _execute(command, root, env, options.timeout_s, isolation.prefix)
        duration = time.monotonic() - start
        run = TestRun(
            command=command,
            duration_s=round(duration, 3),
            returncode=returncode,
            timed_out=timed_out,
            output_tail=_tail(output),
            isolation=isolation.summary(),
        )
        replay = read_replay(replay_dir)
        if problem:
            return RunResult(run, replay, problem)
        return RunResult(run, replay, _judge(command, junit, run, replay, returncode, output))


def _judge(command, junit: Path, run: TestRun, replay: ReplayLog, returncode: int, output: str) -> str:
    """Fill `run` from the results; the problem that makes them unusable, or ''."""
    if not is_pytest(command):
        (run.passed if returncode == 0 else run.failed).append(" ".join(command))
        return ""
    if not junit.is_file():
        return f"the test command produced no JUnit report (exit {returncode}): {_last_line(output)}"
    parse_junit(junit, run)
    run.not_replayed.update({k: v for k, v in replay.not_replayed.items() if k not in run.not_replayed})
    run.imports = replay.imports
    if returncode not in (0, 1, 5) and not (run.failed or run.errors):
        return f"pytest exited with status {returncode}: {_last_line(output)}"
    return ""


def _last_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _execute(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float, prefix: tuple[str, ...] = ()
) -> tuple[str, int, str, bool]:
    """(output, returncode, problem, timed_out). Output goes to a file, not a pipe, so a daemon
    holding it open cannot stall the run; every process of the run is killed when it ends."""
    program = command[0] if os.sep in command[0] else shutil.which(command[0], path=env.get("PATH"))
    if program is None or not os.access(program, os.X_OK):
        return "", -1, f"the test command cannot start: {command[0]}: No such file or directory", False
    command = [*prefix, *command]
    token = uuid.uuid4().hex
    become_subreaper()
    with tempfile.TemporaryFile() as sink:
        try:
            process = subprocess.Popen(
                command,
                cwd=cwd,
                env={**env, TOKEN_VARIABLE: token},
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            return "", -1, f"the test command cannot start: {command[0]}: {error.strerror or error}", False
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            kill_run(token, process.pid)
            process.wait()
        output = _read_tail(sink)
    if timed_out:
        return output, -1, f"the test command timed out after {timeout:g} s", True
    return output, process.returncode, "", False


def _read_tail(sink, limit: int = 256 * 1024) -> str:
    size = sink.seek(0, os.SEEK_END)
    sink.seek(max(0, size - limit))
    return sink.read().decode("utf-8", errors="replace")


def _test_id(case: ElementTree.Element) -> str:
    """pytest's node id from a JUnit testcase (classname 'tests.test_x.TestY', name 'test_z[p]')."""
    classname = case.get("classname", "")
    name = case.get("name", "")
    file = case.get("file")
    parts = classname.split(".")
    module_parts, class_parts = parts, []
    for index, part in enumerate(parts):
        if part.startswith("Test") and index > 0:
            module_parts, class_parts = parts[:index], parts[index:]
            break
    path = file or ("/".join(module_parts) + ".py" if module_parts and module_parts != [""] else "")
    if not path and re.fullmatch(r"[\w.]+", name) and "." in name:
        return name.replace(".", "/") + ".py"  # a collection error: the name is the module
    return "::".join([path, *class_parts, name]) if path else name


def parse_junit(path: Path, run: TestRun) -> None:
    tree = ElementTree.parse(path)
    for case in tree.iter("testcase"):
        test = _test_id(case)
        children = {child.tag: child for child in case}
        if "failure" in children or "error" in children:
            element = children["failure"] if "failure" in children else children["error"]
            (run.failed if "failure" in children else run.errors).append(test)
            raised = [line[1:].strip() for line in (element.text or "").splitlines() if line.startswith("E ")]
            errors = [line for line in raised if "Error" in line or "assert" in line.lower()] or raised
            run.messages[test] = errors[-1][:300] if errors else _first_line(element.get("message") or "")
            run.traceback_files[test] = _traceback_files(element.text or "")
        elif "skipped" in children:
            message = children["skipped"].get("message", "") or (children["skipped"].text or "")
            if NOT_REPLAYED_PREFIX in message:
                run.not_replayed[test] = message.split(NOT_REPLAYED_PREFIX, 1)[1].strip()
            else:
                run.skipped.append(test)
        else:
            run.passed.append(test)


# A traceback entry's location, "path.py:12: in <module>" (short) or "path.py:12: RuntimeError" (long); a
# relative path is inside the rootdir (the workspace), an absolute one outside it (site-packages)
_TRACEBACK_FRAME = re.compile(r"^([\w.-][\w./-]*\.py):\d+:", re.MULTILINE)


def _traceback_files(text: str) -> list[str]:
    """The repository files (relative) a failure's traceback passes through, in order."""
    return list(dict.fromkeys(path for path in _TRACEBACK_FRAME.findall(text) if not path.startswith("..")))


def read_replay(directory: Path) -> ReplayLog:
    log = ReplayLog()
    if not directory.is_dir():
        return log
    merged: dict[str, dict[str, Any]] = {}
    for file in sorted(directory.glob("replay-*.json")):
        try:
            payload = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for launch in payload.get("launches", []):
            key = json.dumps(
                [launch.get(k) for k in ("module", "qualname", "signature", "constexprs", "options")],
                sort_keys=True,
                default=str,
            )
            kept = merged.setdefault(key, launch)
            if kept is not launch:
                kept["count"] = kept.get("count", 0) + launch.get("count", 0)
                kept["tests"] = sorted(set(kept.get("tests", [])) | set(launch.get("tests", [])))
                for name in ("dot_dtypes", "sites", "site_lines"):
                    kept[name] = sorted(set(kept.get(name, [])) | set(launch.get(name, [])))
        log.not_replayed.update(payload.get("not_replayed", {}))
        log.autotune_disagreements.extend(payload.get("autotune_disagreements", []))
        for test, files in payload.get("imports", {}).items():
            log.imports[test] = sorted(set(log.imports.get(test, [])) | set(files))
    log.launches = list(merged.values())
    return log


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
