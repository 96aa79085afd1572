"""Small rule files and source trees shared by the scan tests (real rules through the real engine)."""

from __future__ import annotations

from pathlib import Path

RULE_SYNC = """\
id: PT990
name: test-cuda-synchronize
category: pytorch
summary: a test rule on torch.cuda.synchronize
severity: error
message: "torch.cuda.synchronize() on {target.name}"
match:
  - call: torch.cuda.synchronize
fix: {kind: advice}
"""

RULE_SMI = """\
id: PT991
name: test-nvidia-smi
category: environment
summary: a test rule on nvidia-smi strings
severity: warning
message: "nvidia-smi is absent on AMD nodes"
match:
  - string: {regex: "\\\\bnvidia-smi\\\\b"}
"""

SYNC_FILE = "import torch\n\n\ndef wait():\n    torch.cuda.synchronize()\n"
SMI_FILE = "import subprocess\n\nsubprocess.run(['nvidia-smi'])\n"
PLAIN_FILE = "def add(a, b):\n    return a + b\n"


def write_rules(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "PT990-test-cuda-synchronize.yaml").write_text(RULE_SYNC, encoding="utf-8")
    (directory / "PT991-test-nvidia-smi.yaml").write_text(RULE_SMI, encoding="utf-8")
    return directory


def write_tree(root: Path, copies: int = 1) -> Path:
    """A small package: `copies` modules with each kind of finding, one plain module."""
    for index in range(copies):
        (root / "pkg" / f"sub{index}").mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"sub{index}" / "sync.py").write_text(SYNC_FILE, encoding="utf-8")
        (root / "pkg" / f"sub{index}" / "smi.py").write_text(SMI_FILE, encoding="utf-8")
    (root / "pkg" / "plain.py").write_text(PLAIN_FILE, encoding="utf-8")
    return root
