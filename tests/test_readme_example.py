"""The README's "Write your own view" example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gfun.views import VIEW_CLASSES, unregister_view

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example(heading: str) -> str:
    """The first ```python block under the README section ``heading``."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(f"\n### {heading}\n"):]
    match = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert match is not None, f"no python block under {heading!r}"
    return match.group(1)


def test_write_your_own_view_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the example saves its model in the current directory
    namespace: dict = {"__name__": "readme_example"}
    try:
        exec(compile(readme_example("Write your own view"), str(README), "exec"), namespace)  # noqa: S102
        assert VIEW_CLASSES["c"] is namespace["CharGramView"]
        assert (tmp_path / "model-xc").is_dir() and namespace["same"].view_names_ == ["x", "c"]
    finally:
        unregister_view("c")
