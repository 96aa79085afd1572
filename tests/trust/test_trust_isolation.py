"""A hostile test command under porter.verify: a setsid grandchild, a network call, the key, `git
config`, and files outside the repository. None of it may reach the user, the machine or the key."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from porter.verify.isolation import isolation_for
from porter.verify.options import VerifyOptions
from porter.verify.runner import run_tests
from porter.verify.workspace import create_workspace

KEY = "sk-verify-0123456789abcdef"
HOSTILE = textwrap.dedent(
    """\
    import json, os, socket, subprocess, sys, time
    # a grandchild that leaves the process group and would outlive the run
    subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); open('escaped.pid', 'w').write(str(os.getpid())); time.sleep(60)"])
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
        network = "reached"
    except OSError as error:
        network = f"blocked: {error}"
    subprocess.run(["git", "config", "user.name", "evil"], capture_output=True)
    home = os.path.expanduser("~")
    seen = {"key": os.environ.get("OPENAI_API_KEY"), "secret_names": sorted(k for k in os.environ if "TOKEN" in k),
            "uid": os.getuid(), "network": network, "home": home, "toplevel": subprocess.run(
                ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True).stdout.strip()}
    for _ in range(50):
        if os.path.exists("escaped.pid"):
            break
        time.sleep(0.05)
    print("SEEN " + json.dumps(seen))
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process tracking reads /proc")
def test_a_hostile_test_command_reaches_nothing_and_leaves_nothing_running(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-0123456789abcdef")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hostile.py").write_text(HOSTILE)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    workspace = create_workspace(repo)
    try:
        options = VerifyOptions(test_cmd=(sys.executable, "hostile.py", str(port)), timeout_s=60)
        result = run_tests(workspace.root, options, "mi350x", None)
        escaped = int((workspace.root / "escaped.pid").read_text())
    finally:
        workspace.close()
        listener.close()
    line = next(line for line in result.run.output_tail.splitlines() if line.startswith("SEEN "))
    seen = json.loads(line[5:])
    assert seen["key"] is None and seen["secret_names"] == []
    assert seen["toplevel"] != str(repo) and not (repo / ".git" / "config").read_text().count("evil")
    assert not seen["home"].startswith(os.path.expanduser("~")) or os.path.expanduser("~") == "/"
    time.sleep(0.1)
    assert not _alive(escaped), "the setsid grandchild outlived the run"
    isolation = isolation_for(sys.executable)
    assert result.run.isolation.startswith("private copy with its own .git")
    if "none" in isolation.network:
        assert seen["network"].startswith("blocked")
    if os.geteuid() == 0 and isolation.uid is not None:
        assert seen["uid"] == isolation.uid and "nobody" in result.run.isolation


def test_a_timed_out_command_and_its_daemons_are_killed(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); "
        'open("daemon.pid", "w").write(str(os.getpid())); time.sleep(60)\'])\n'
        "time.sleep(60)\n"
    )
    start = time.monotonic()
    result = run_tests(tmp_path, VerifyOptions(test_cmd=(sys.executable, str(script)), timeout_s=1.5), "mi350x", None)
    assert result.run.timed_out and time.monotonic() - start < 10
    daemon = int((tmp_path / "daemon.pid").read_text())
    assert not _alive(daemon)
