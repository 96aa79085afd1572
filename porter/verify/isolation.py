"""How a test command (the user's tests, with a model's patch applied) is confined, and cleaned up.

What porter puts in force, each where this machine allows it, and says so in `Isolation.summary`:
- a private copy of the repository with its own .git (porter.verify.workspace), never a worktree
  sharing the user's;
- when porter runs as root, an unprivileged user (`nobody`) owns the copy and runs the tests;
- no network: a new network namespace (`unshare -n` as root, `unshare -c -n` as a user);
- an environment without secrets (porter.secrets), with HOME in a scratch directory;
- every process the run started is killed at the end: its process group, and every process that
  carries the run's token in its environment or is a descendant of the run, including a grandchild
  that called setsid (porter is the subreaper of its orphans, so they cannot slip away).
Nothing here calls the copy "sandboxed": a same-machine process with these limits is not a sandbox.
"""

from __future__ import annotations

import ctypes
import functools
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

UNPRIVILEGED_USER = "nobody"
TOKEN_VARIABLE = "PORTER_RUN_ID"  # not *_TOKEN: that name would read as a secret
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Isolation:
    prefix: tuple[str, ...] = ()  # put before the test command
    uid: int | None = None  # the owner to give the copy and scratch files, when dropping root
    gid: int | None = None
    user: str = "current user"
    network: str = "host network"
    notes: tuple[str, ...] = field(default_factory=tuple)  # why a measure is not in force

    def summary(self) -> str:
        parts = [
            f"private copy with its own .git; user: {self.user}; network: {self.network}; "
            "environment: secrets removed; processes: all killed at the end (group, session and token tracked)"
        ]
        return "; ".join(parts + list(self.notes))


def isolation_for(python: str = sys.executable, drop_root: bool = True) -> Isolation:
    """The strongest confinement that can run `python` on this machine (probed once per process).
    `drop_root` False: keep porter's user (the directory to test in was not prepared for another)."""
    return _probe(python, os.geteuid(), drop_root)


@functools.lru_cache(maxsize=8)
def _probe(python: str, euid: int, drop_root: bool) -> Isolation:
    notes: list[str] = [] if drop_root or euid != 0 else ["root kept: the directory is not a porter copy"]
    for candidate in _candidates(euid if drop_root else -1, notes):
        problem = _try(candidate, python)
        if not problem:
            return Isolation(
                candidate.prefix, candidate.uid, candidate.gid, candidate.user, candidate.network, tuple(notes)
            )
        notes.append(f"{candidate.user} / {candidate.network} not possible here ({problem})")
    return Isolation(notes=tuple(notes))


def _candidates(euid: int, notes: list[str]) -> list[Isolation]:
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    options: list[Isolation] = []
    if euid == -1:  # root, told not to drop it
        return (
            [Isolation((unshare, "-n", "--"), user="root", network="none (network namespace)")] if unshare else []
        ) + [Isolation(user="root")]
    if euid == 0:
        account = _account(UNPRIVILEGED_USER)
        if account and setpriv:
            drop = (
                setpriv,
                f"--reuid={account.pw_uid}",
                f"--regid={account.pw_gid}",
                "--clear-groups",
                "--no-new-privs",
                "--",
            )
            user = f"{UNPRIVILEGED_USER} (uid {account.pw_uid})"
            if unshare:
                options.append(
                    Isolation(
                        (unshare, "-n", "--", *drop), account.pw_uid, account.pw_gid, user, "none (network namespace)"
                    )
                )
            options.append(Isolation(drop, account.pw_uid, account.pw_gid, user, "host network"))
        else:
            notes.append(f"cannot drop root: no {UNPRIVILEGED_USER} account or no setpriv")
        if unshare:
            options.append(Isolation((unshare, "-n", "--"), user="root", network="none (network namespace)"))
        options.append(Isolation(user="root"))
    else:
        if unshare:
            options.append(Isolation((unshare, "-c", "-n", "--"), network="none (user + network namespace)"))
        options.append(Isolation())
    return options


def _account(name: str):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _try(candidate: Isolation, python: str) -> str:
    """'' when the candidate can run python, and that python its own subprocess (tests spawn
    interpreters), else a short reason."""
    check = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'], check=True)"
    try:
        done = subprocess.run(
            [*candidate.prefix, python, "-c", check], capture_output=True, text=True, timeout=30, cwd="/"
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)[:120]
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return last[:160]
    return ""


def hand_over(isolation: Isolation, *paths: Path) -> None:
    """Give the unprivileged user the files the tests may write (the copy, the scratch directory)."""
    if isolation.uid is None or isolation.gid is None:
        return
    for top in paths:
        os.chown(top, isolation.uid, isolation.gid)
        for directory, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                os.lchown(os.path.join(directory, name), isolation.uid, isolation.gid)


# ---- every process of a run, and stopping them ------------------------------------------------


def become_subreaper() -> bool:
    """Make orphans of porter's descendants porter's children (Linux): a setsid'd grandchild whose
    parent exits stays findable. False where the OS has no such thing."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def run_processes(token: str, leader: int) -> set[int]:
    """Pids that belong to a run: carrying its token, or descending from its leader or from those."""
    parents: dict[int, int] = {}
    tagged: set[int] = set()
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        pid = int(entry)
        parent = _parent(pid)
        if parent is None:
            continue
        parents[pid] = parent
        if _environ_has(pid, needle):
            tagged.add(pid)
    found = set(tagged) | ({leader} if leader in parents else set())
    grown = True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in found and pid not in found}
        found |= more
        grown = bool(more)
    found.discard(os.getpid())
    return found


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def _environ_has(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return needle in handle.read().split(b"\0")
    except OSError:
        return False


def kill_run(token: str, leader: int, rounds: int = 50) -> int:
    """SIGKILL every process of the run until none is left (a forking loop included); returns how
    many were killed. Escaped children that porter inherited as subreaper are reaped."""
    try:
        os.killpg(leader, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    killed: set[int] = set()
    for _ in range(rounds):
        pids = {pid for pid in run_processes(token, leader) if not _is_zombie(pid)}
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)
    for pid in killed - {leader}:
        _reap(pid)
    return len(killed)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read()
    except OSError:
        return True
    return text[text.rfind(b")") + 2 :][:1] in (b"Z", b"X")


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not porter's child (its parent still lives, or another reaper took it)
