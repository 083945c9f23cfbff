"""A tiny synthetic multilingual world for the word-vector views: corpora and aligned ``.vec`` files.

Each of ``N_CONCEPTS`` concepts has a random vector and one pseudo-word per language (random
letters, so never a stop word); translations of a concept share its vector (plus optional noise).
Class ``c`` owns a block of concepts; a document with labels ``{c, ...}`` mostly draws words of its
classes' concepts and some of the shared "noise" concepts. The last ``N_MISSING`` concepts of every
language are left out of the ``.vec`` files, to exercise out-of-vocabulary words.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

N_CONCEPTS = 80
N_CLASSES = 4
CONCEPTS_PER_CLASS = 12
N_MISSING = 6
DIM = 12
LANGS = ("en", "it", "de", "fr", "nl", "sv")
_LETTERS = np.array(list("bcdfghjklmnprstvz"))
_VOWELS = np.array(list("aeiou"))


@functools.lru_cache(maxsize=4)
def lexicon(seed: int = 0) -> dict[str, list[str]]:
    """Language -> the pseudo-word of each concept (unique within and across languages); do not mutate."""
    rng = np.random.RandomState(seed)
    seen: set[str] = set()
    out: dict[str, list[str]] = {}
    for lang in LANGS:
        words = []
        while len(words) < N_CONCEPTS:
            syll = rng.randint(3, 5)
            word = "".join(rng.choice(_LETTERS) + rng.choice(_VOWELS) for _ in range(syll))
            if word not in seen:
                seen.add(word)
                words.append(word)
        out[lang] = words
    return out


def concept_vectors(seed: int = 0) -> np.ndarray:
    """(N_CONCEPTS, DIM) random vectors shared by all languages."""
    return np.random.RandomState(seed + 1).normal(size=(N_CONCEPTS, DIM)).astype(np.float32)


def write_vec_files(folder: Path, langs=LANGS, *, noise: float = 0.05, seed: int = 0) -> Path:
    """Write ``<folder>/wiki.multi.<lang>.vec`` for ``langs``; return ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    words, base = lexicon(seed), concept_vectors(seed)
    rng = np.random.RandomState(seed + 2)
    for lang in langs:
        kept = N_CONCEPTS - N_MISSING
        vecs = base[:kept] + noise * rng.normal(size=(kept, DIM))
        lines = [f"{kept + 2} {DIM}"]
        lines += [w + " " + " ".join(f"{x:.5f}" for x in v) for w, v in zip(words[lang][:kept], vecs, strict=True)]
        for extra in ("zzunused", "qqunused"):  # words no document uses
            lines.append(extra + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=DIM)))
        (folder / f"wiki.multi.{lang}.vec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def make_corpus(langs, n_per_lang: int, seed: int, *, parallel: bool = False, lex_seed: int = 0,
                ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Synthetic documents: ``(texts, langs, Y)``; ``parallel=True`` makes every language translate the first."""
    words = lexicon(lex_seed)
    rng = np.random.RandomState(seed)
    noise_concepts = np.arange(N_CLASSES * CONCEPTS_PER_CLASS, N_CONCEPTS)
    docs: list[tuple[np.ndarray, np.ndarray]] = []
    n_docs = n_per_lang if parallel else n_per_lang * len(langs)
    for _ in range(n_docs):
        y = np.zeros(N_CLASSES, dtype=np.int8)
        y[rng.choice(N_CLASSES, rng.choice([1, 1, 2]), replace=False)] = 1
        own = np.concatenate([np.arange(c * CONCEPTS_PER_CLASS, (c + 1) * CONCEPTS_PER_CLASS)
                              for c in np.flatnonzero(y)])
        n_tokens = rng.randint(12, 25)
        from_own = rng.rand(n_tokens) < 0.7
        concepts = np.where(from_own, rng.choice(own, n_tokens), rng.choice(noise_concepts, n_tokens))
        docs.append((concepts, y))
    texts, out_langs, Y = [], [], []
    for i, (concepts, y) in enumerate(docs):
        targets = langs if parallel else [langs[i % len(langs)]]
        for lang in targets:
            texts.append(" ".join(words[lang][k] for k in concepts))
            out_langs.append(lang)
            Y.append(y)
    return texts, np.asarray(out_langs, dtype=object), np.asarray(Y, dtype=np.int8)
