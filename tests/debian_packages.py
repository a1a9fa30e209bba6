"""Programs a test needs from Debian's packages (Chromium, valgrind): installed with apt-get
when missing and the tests run as root, so a fresh machine with only Python runs them."""

from __future__ import annotations

import os
import shutil
import subprocess


def run(command: list[str]) -> str:
    """Run a command non-interactively; why it failed, or '' when it succeeded."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    return "" if done.returncode == 0 else f"{' '.join(command)} failed: {done.stderr[-500:]}"


def apt_install(package: str) -> str:
    """Install Debian's ``package`` with apt-get; returns why it could not, or ''."""
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install it"
    if shutil.which("apt-get") is None:
        return "apt-get is not available (not a Debian-like system)"
    return run(["apt-get", "update"]) or run(["apt-get", "install", "-y", package])
