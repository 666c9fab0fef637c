"""``make docs``: the MkDocs site (API pages from the docstrings) builds in strict mode, so a broken link, a
missing page or a docstring cross-reference that does not resolve fails the tests. Skipped without the
``docs`` extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_docs_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, env=env)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    for page in ("index.html", "ENVIRONMENT/index.html", "OPENSPIEL/index.html", "api/openspiel/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    assert "python_barbu" in (tmp_path / "site" / "api/openspiel/index.html").read_text(encoding="utf-8")
