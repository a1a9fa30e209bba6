"""The source distribution carries the changelog and the contributing guide."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


# What a build must not see: local state of the checkout. The build runs on a copy because
# setuptools writes its metadata into the source tree, and CI builds and installs the same
# checkout from two legs at once.
LOCAL = shutil.ignore_patterns(
    ".git",
    ".venv*",
    ".pgdata",
    "dist",
    "build",
    "*.egg-info",
    "__pycache__",
    "screenshots",
    "site",
    ".*_cache",
)


def test_sdist_includes_changelog_and_contributing(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=LOCAL)
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    [sdist] = tmp_path.glob("django_pgmq-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        for doc in ("CHANGELOG.md", "CONTRIBUTING.md"):
            assert doc in names
            member = archive.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/{doc}")
            assert member is not None
            assert member.read() == (ROOT / doc).read_bytes()
        assert "django_pgmq/sql/05_names.sql" in names
