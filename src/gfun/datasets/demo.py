"""The small multilingual sample bundled with gfun, for examples, tutorials and quick tests.

Debian package descriptions in English, Italian, Danish, French and German, labelled with 30 debtags
(the debtags protocol of :mod:`gfun.datasets.debtags` at a smaller scale; training sets non-parallel,
no source package shared between training and test documents). See ``data/demo_README.md`` for the
provenance and the licence (Debian main, DFSG), and ``benchmarks/build_demo_data.py`` for how it is built.
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable

from gfun.corpus.multilingual import MultilingualCorpus

__all__ = ["DEMO_FILES", "demo_classes", "load_demo"]

_PACKAGE = "gfun.datasets"
DEMO_FILES = {"train": "demo_train.jsonl.gz", "test": "demo_test.jsonl.gz", "classes": "demo_classes.json"}


def _resource(name: str) -> Traversable:
    res = resources.files(_PACKAGE).joinpath("data", name)
    if not res.is_file():
        raise FileNotFoundError(
            f"demo data file {name!r} is missing from the gfun package (data/ folder); rebuild it with "
            "benchmarks/build_demo_data.py or reinstall gfun")
    return res


def demo_classes() -> list[str]:
    """The class list of the demo sample, in column order."""
    return json.loads(_resource(DEMO_FILES["classes"]).read_text(encoding="utf-8"))


def load_demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """The bundled demo sample as ``(train, test)``.

    Returns
    -------
    train, test : MultilingualCorpus
        Sharing one class list (:func:`demo_classes`). Ids are Debian binary package names (unique
        within a language) and ``extra["source"]`` holds the source package.

    Examples
    --------
    >>> train, test = load_demo()
    >>> train.languages
    ['da', 'de', 'en', 'fr', 'it']
    """
    classes = demo_classes()
    out = []
    for split in ("train", "test"):
        with resources.as_file(_resource(DEMO_FILES[split])) as path:
            out.append(MultilingualCorpus.from_jsonl(path, classes))
    return out[0], out[1]
