"""Command-line option parsing (gfun.cli.options): ``--view-param``, the global options, every default stated."""

from __future__ import annotations

import argparse

import pytest

from gfun.cli.main import build_parser
from gfun.cli.options import GLOBAL_OPTIONS, iter_parsers, parse_view_params


def test_view_param_option() -> None:
    out = parse_view_params(["r.hidden_size=16", "r.wce=true", "b.model=some/dir", "m.source=vec:x"],
                            {"m": {"source": "e5"}})
    assert out == {"r": {"hidden_size": 16, "wce": True}, "b": {"model": "some/dir"}, "m": {"source": "vec:x"}}
    for bad in ("hidden_size=16", "q.x=1", "r.=3", "r.x"):
        with pytest.raises(ValueError):
            parse_view_params([bad], None)


def _parsers() -> list[argparse.ArgumentParser]:
    return list(iter_parsers(build_parser()))


def test_every_help_lists_the_global_options() -> None:
    parsers = _parsers()
    assert len(parsers) > 15  # gfun, its commands and their sub-commands
    for parser in parsers:
        text = parser.format_help()
        assert GLOBAL_OPTIONS in text and "-q, --quiet" in text and "-v, --verbose" in text, parser.prog


def unstated_defaults(parsers: list[argparse.ArgumentParser]) -> list[str]:
    """The options of ``parsers`` whose default is a value (not None: absent; not a flag, whose default is not to
    be given) and whose --help line does not state it (neither the help formatter nor the text)."""
    flags = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._CountAction, argparse._HelpAction,
             argparse._VersionAction, argparse._StoreConstAction, argparse._AppendConstAction)
    unstated = []
    for parser in parsers:
        formatter = parser._get_formatter()
        for action in parser._actions:
            if (not action.option_strings or isinstance(action, flags) or action.default is None
                    or action.default is argparse.SUPPRESS or action.help is argparse.SUPPRESS):
                continue
            text = formatter._expand_help(action) if action.help else ""
            if "default" not in text.lower():
                unstated.append(f"{parser.prog} {action.option_strings[-1]} (default {action.default!r})")
    return unstated


def test_every_option_with_a_default_states_it_in_its_help() -> None:
    assert not unstated_defaults(_parsers()), "options whose --help does not state their default:\n" + "\n".join(
        unstated_defaults(_parsers()))
    bare = argparse.ArgumentParser(prog="bare")  # the plain formatter states no default: caught
    bare.add_argument("--jobs", type=int, default=2, help="parallel jobs")
    assert unstated_defaults([bare]) == ["bare --jobs (default 2)"]


def test_an_undetectable_language_is_one_line_naming_the_lang_field(tmp_path, capsys) -> None:
    """The detector's hint named Python parameters (min_confidence, candidates) that no option sets: the command
    line's says to give the document its 'lang', after detection preferred the model's languages."""
    import json

    import numpy as np

    from gfun.cli.main import main
    from gfun.datasets.demo import load_demo

    pytest.importorskip("py3langid")
    train, _ = load_demo()
    idx = np.concatenate([ix[:30] for lang, ix in train.by_language().items() if lang in ("de", "en")])
    train.subset(np.sort(idx)).to_jsonl(tmp_path / "train.jsonl")
    model = tmp_path / "m"
    assert main(["-q", "train", "--train", str(tmp_path / "train.jsonl"), "--views", "x", "--model", str(model)]) == 0
    (tmp_path / "docs.jsonl").write_text(json.dumps({"id": "n", "text": "12345 !!! 678"}) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["-q", "predict", "--model", str(model), "--input", str(tmp_path / "docs.jsonl")]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "the text has no letters" in err, err
    assert "Give the document its 'lang' field" in err and "min_confidence" not in err and "candidate" not in err
