"""Samples of a corpus that tests fit on: ``n`` documents of each of some languages, drawn with a seed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gfun.corpus.multilingual import MultilingualCorpus


def sample_languages(corpus: MultilingualCorpus, n: int, seed: int, langs: Sequence[str]) -> MultilingualCorpus:
    """``n`` documents of each language of ``langs`` (in that order, one draw of a ``seed``-ed generator each),
    kept in corpus order."""
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in langs])))
