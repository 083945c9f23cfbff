"""One TF-IDF vocabulary over all languages (gfun.text.pooled)."""

from __future__ import annotations

import numpy as np

from gfun.text.pooled import PooledTfidf

TEXTS = ["python package manager", "python bindings for gtk", "paquet python pour gtk", "gestionnaire de paquets",
         "python Paket Manager"]


def test_rows_are_sublinear_tfidf_over_one_vocabulary_and_unit_length() -> None:
    tfidf = PooledTfidf(ngram_range=(1, 1), min_df=2)
    X = tfidf.fit_transform(TEXTS)
    assert set(tfidf.vocabulary_) == {"python", "gtk", "manager"}  # shared across languages, in >= 2 documents
    np.testing.assert_allclose(np.sqrt(X.multiply(X).sum(axis=1)).A.ravel()[[0, 1, 2, 4]], 1.0, rtol=1e-6)
    df = np.array([(X[:, j] > 0).sum() for j in range(X.shape[1])])
    np.testing.assert_allclose(tfidf.idf_, np.log((1 + len(TEXTS)) / (1 + df)) + 1, rtol=1e-6)
    assert X[3].nnz == 0  # no shared term: an empty row, not an error


def test_documents_of_any_language_map_into_the_vocabulary_batch_independently() -> None:
    tfidf = PooledTfidf()
    tfidf.fit_transform(TEXTS * 2)
    new = ["python gtk Bindungen", "nieznane słowa"]
    batch = tfidf.transform(new).toarray()
    alone = np.vstack([tfidf.transform([t]).toarray() for t in new])
    np.testing.assert_array_equal(batch, alone)
    assert batch[0].any() and not batch[1].any()


def test_state_round_trip_gives_the_same_rows() -> None:
    tfidf = PooledTfidf()
    X = tfidf.fit_transform(TEXTS * 2)
    meta, arrays = tfidf.get_state()
    again = PooledTfidf.from_state(meta, arrays)
    np.testing.assert_array_equal(again.transform(TEXTS).toarray(), X[: len(TEXTS)].toarray())


def test_too_few_documents_for_min_df_keep_every_term() -> None:
    tfidf = PooledTfidf(min_df=2)
    X = tfidf.fit_transform(["one lonely document"])
    assert X.shape[1] > 0
