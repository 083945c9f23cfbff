"""The Python examples of README.md and docs/user-guide.md run as written (README "Python"; user guide "Nested
estimators" and "Write your own view"); their links lead to existing files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gfun.views import VIEW_CLASSES, unregister_view

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
USER_GUIDE = ROOT / "docs" / "user-guide.md"
DOCS = [README, USER_GUIDE, *(ROOT / "docs" / name for name in ("architecture.md", "benchmarks.md", "safety.md"))]


def python_example(path: Path, heading: str) -> str:
    """The first ```python block under the section ``heading`` (any level) of ``path``."""
    text = path.read_text(encoding="utf-8")
    start = re.search(rf"^#+ {re.escape(heading)}\n", text, flags=re.MULTILINE)
    assert start is not None, f"no section {heading!r} in {path.name}"
    match = re.search(r"```python\n(.*?)```", text[start.end():], flags=re.DOTALL)
    assert match is not None, f"no python block under {heading!r} in {path.name}"
    return match.group(1)


def run_example(path: Path, heading: str) -> dict:
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(python_example(path, heading), str(path), "exec"), namespace)  # noqa: S102
    return namespace


def test_the_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the example saves its model in the current directory
    ns = run_example(README, "Python")
    assert (ns["same"].predict(ns["test"]) == ns["Y_pred"]).all()
    assert ns["xmw"].get_params()["views"] == "xmw"
    assert ns["model"].get_params()["meta__C"] == "cv" and ns["same"].meta.C == "cv"


def test_write_your_own_view_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        ns = run_example(USER_GUIDE, "Write your own view")
        assert VIEW_CLASSES["c"] is ns["CharGramView"]
        assert (tmp_path / "model-xc").is_dir() and ns["same"].view_names_ == ["x", "c"]
    finally:
        unregister_view("c")


def test_the_nested_estimators_example_runs() -> None:
    from gfun.funnelling.aggregation import Select

    ns = run_example(USER_GUIDE, "Nested estimators")
    model = ns["model"]
    assert model.meta.C == "cv" and model.meta.class_weight == "balanced" and model.meta.threshold == "auto"
    assert model.mapper.C == "cv" and model.view_params == {"x": {"C": 10}}
    assert isinstance(model.aggregation, Select) and model.aggregation.average == "pooled"
    assert model.aggregation_.selected_ == model.selected_views_ and len(model.meta_.C_) == len(model.classes_)
    assert ns["paper"].get_params()["meta__C"] == "cv" and ns["pooled"].get_params()["aggregation__average"] == "pooled"
    assert ns["search"].best_params_["meta__C"] in (1, 10)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_relative_links_lead_to_existing_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert targets, f"{path.name} links nowhere"
    for target in targets:
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        assert resolved.exists(), f"{path.name}: {target} leads nowhere"
        if anchor and resolved.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", resolved.read_text(encoding="utf-8"), flags=re.MULTILINE)
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{path.name}: no heading #{anchor} in {resolved.name}"
