"""Aligned word-vector sources: .vec files, encoder-derived vectors, Procrustes, dictionaries, P@1."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.embeddings import add_embeddings_parser, main
from gfun.wordvectors import make_source
from gfun.wordvectors.base import WordVectorSource, vocabulary_hash
from gfun.wordvectors.dictionaries import freedict_pairs, parse_dictd_entry, read_dictd, read_pairs, split_pairs
from gfun.wordvectors.encoder import EncoderWordVectors
from gfun.wordvectors.evaluation import evaluate_alignment, translation_precision
from gfun.wordvectors.procrustes import ProcrustesAligned, procrustes
from gfun.wordvectors.vecfile import VecFileSource, read_vec_subset


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


class ArraySource(WordVectorSource):
    """In-memory source: language -> {word: vector}."""

    name = "array"

    def __init__(self, table: dict[str, dict[str, np.ndarray]]) -> None:
        super().__init__()
        self.table = table
        self.calls = 0

    @property
    def dim(self) -> int:
        return len(next(iter(next(iter(self.table.values())).values())))

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        words = self.table[lang]
        found = np.array([w in words for w in vocabulary], dtype=bool)
        mat = np.zeros((len(vocabulary), self.dim), dtype=np.float32)
        for i, w in enumerate(vocabulary):
            if w in words:
                mat[i] = words[w]
        return mat, found


def _letters(i: int) -> str:
    """0 -> 'aa', 1 -> 'ab', ...: alphabetic word suffixes (dictionaries keep alphabetic words only)."""
    return "abcdefghijklmnopqrstuvwxyz"[i // 26 % 26] + "abcdefghijklmnopqrstuvwxyz"[i % 26]


def _rotated_languages(n: int = 300, dim: int = 16, seed: int = 0, noise: float = 0.0):
    """English vectors, and 'it' = the same vectors rotated (+ noise), words en{i} <-> it{i}."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim)).astype(np.float32)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    other = base @ q.T.astype(np.float32) + noise * rng.normal(size=(n, dim)).astype(np.float32)
    table = {
        "en": {f"en{_letters(i)}": base[i] for i in range(n)},
        "it": {f"it{_letters(i)}": other[i] for i in range(n)},
    }
    pairs = [(f"en{_letters(i)}", f"it{_letters(i)}") for i in range(n)]
    return table, pairs, q


def _write_vec(path: Path, words: list[str], mat: np.ndarray, *, header: bool = True) -> Path:
    lines = [f"{len(words)} {mat.shape[1]}"] if header else []
    lines += [w + " " + " ".join(f"{v:.6f}" for v in row) for w, row in zip(words, mat, strict=True)]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


# ----------------------------------------------------------------------------------------------
# base
# ----------------------------------------------------------------------------------------------


def test_vocabulary_hash_is_order_sensitive():
    assert vocabulary_hash(["a", "b"]) != vocabulary_hash(["b", "a"])
    assert vocabulary_hash(["ab"]) != vocabulary_hash(["a", "b"])
    assert vocabulary_hash(["a", "b"]) == vocabulary_hash(("a", "b"))


def test_vectors_reports_oov_share():
    src = ArraySource({"en": {"a": np.ones(4), "b": np.full(4, 2.0)}})
    mat = src.vectors("en", ["a", "zz", "b", "yy"])
    assert mat.shape == (4, 4) and mat.dtype == np.float32
    assert np.all(mat[1] == 0) and np.all(mat[3] == 0)
    assert src.oov_share_["en"] == pytest.approx(0.5)


# ----------------------------------------------------------------------------------------------
# .vec files
# ----------------------------------------------------------------------------------------------


@pytest.fixture()
def vec_dir(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    words = ["the", "Cat", "cat", "dog", "Paris", "house", "tree"]
    _write_vec(tmp_path / "wiki.multi.en.vec", words, rng.normal(size=(len(words), 6)))
    _write_vec(tmp_path / "it.vec.gz", ["il", "gatto", "cane", "casa"], rng.normal(size=(4, 6)), header=False)
    return tmp_path


def test_read_vec_subset_exact_fold_case_and_order(vec_dir):
    path = vec_dir / "wiki.multi.en.vec"
    lines = path.read_text().splitlines()[1:]
    table = {ln.split(" ")[0]: np.array(ln.split(" ")[1:], dtype=np.float32) for ln in lines}
    mat, found = read_vec_subset(path, ["dog", "CAT", "cat", "paris", "nope", "dog"])
    np.testing.assert_allclose(mat[0], table["dog"])
    np.testing.assert_allclose(mat[1], table["Cat"])  # first casing in file order
    np.testing.assert_allclose(mat[2], table["cat"])  # exact match wins over a folded one
    np.testing.assert_allclose(mat[3], table["Paris"])
    np.testing.assert_allclose(mat[5], table["dog"])
    assert found.tolist() == [True, True, True, True, False, True]
    assert not mat[4].any()
    mat, found = read_vec_subset(path, ["paris", "CAT"], fold_case=False)
    assert not found.any()
    _, found = read_vec_subset(path, ["the", "cat", "dog"], max_rows=3)
    assert found.tolist() == [True, True, False]
    _, found = read_vec_subset(vec_dir / "it.vec.gz", ["il", "gatto", "cane"], max_rows=2)  # no header line
    assert found.tolist() == [True, True, False]


def test_vec_source_layouts_and_cache(vec_dir, tmp_path):
    cache = tmp_path / "cache"
    src = VecFileSource(vec_dir, cache_dir=cache)
    assert src.path_for("en").name == "wiki.multi.en.vec"
    assert src.path_for("it").name == "it.vec.gz"
    assert src.dim == 6
    mat = src.vectors("it", ["gatto", "cane", "xyz"])
    assert mat.shape == (3, 6) and src.oov_share_["it"] == pytest.approx(1 / 3)
    assert len(list((cache / "wordvectors").glob("vec-*.npz"))) == 1
    again = VecFileSource(vec_dir, cache_dir=cache).vectors("it", ["gatto", "cane", "xyz"])
    np.testing.assert_array_equal(mat, again)
    with pytest.raises(FileNotFoundError):
        src.vectors("fi", ["kissa"])
    tmpl = VecFileSource(str(vec_dir / "wiki.multi.{lang}.vec"), cache=False)
    assert tmpl.vectors("en", ["dog"]).shape == (1, 6)
    mapping = VecFileSource({"it": vec_dir / "it.vec.gz"}, cache=False)
    np.testing.assert_array_equal(mapping.vectors("it", ["gatto", "cane", "xyz"]), mat)


def test_vec_cache_is_invalidated_when_the_file_changes(vec_dir, tmp_path):
    cache = tmp_path / "cache"
    path = vec_dir / "wiki.multi.en.vec"
    first = VecFileSource({"en": path}, cache_dir=cache).vectors("en", ["dog"])
    _write_vec(path, ["dog"], np.full((1, 6), 7.0))
    second = VecFileSource({"en": path}, cache_dir=cache).vectors("en", ["dog"])
    assert not np.allclose(first, second) and np.allclose(second, 7.0)


# ----------------------------------------------------------------------------------------------
# Procrustes
# ----------------------------------------------------------------------------------------------


def test_procrustes_recovers_a_rotation():
    table, pairs, q = _rotated_languages()
    x = np.stack([table["it"][b] for _, b in pairs])
    y = np.stack([table["en"][a] for a, _ in pairs])
    w = procrustes(x, y)
    np.testing.assert_allclose(w @ w.T, np.eye(w.shape[0]), atol=1e-8)
    np.testing.assert_allclose(x @ w, y, atol=1e-4)
    with pytest.raises(ValueError):
        procrustes(x, y[:-1])


def test_procrustes_aligned_source_maps_only_non_pivot_languages():
    table, pairs, _ = _rotated_languages(noise=0.05)
    base = ArraySource(table)
    aligned = ProcrustesAligned(base, {"it": [(b, a) for a, b in pairs[:200]]}, pivot="en")
    assert aligned.dim == 16 and "procrustes" in aligned.name
    en = aligned.vectors("en", [a for a, _ in pairs[200:]])
    it = aligned.vectors("it", [b for _, b in pairs[200:]])
    cos = np.sum(en * it, axis=1) / np.linalg.norm(en, axis=1) / np.linalg.norm(it, axis=1)
    assert cos.min() > 0.95
    assert aligned.n_pairs_["it"] == 200
    assert aligned.maps_["en"] is None
    # a language without dictionary passes through (unit-normalised)
    lone = ProcrustesAligned(base, {}, pivot="en").vectors("it", ["itaa"])
    np.testing.assert_allclose(lone[0], table["it"]["itaa"] / np.linalg.norm(table["it"]["itaa"]), rtol=1e-5)


# ----------------------------------------------------------------------------------------------
# dictionaries
# ----------------------------------------------------------------------------------------------

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(n: int) -> str:
    out = ""
    while True:
        out = _B64[n % 64] + out
        n //= 64
        if not n:
            return out


ENTRIES = {
    "cat": "cat /kæt/ <n>\n1. gatto, micio\ndomestic animal\n2. felino 2.\nany feline\n 3.\nanother gloss\n",
    "dog": "dog /dɒɡ/\ncane\n",
    "house": "house /haʊs/ <n>\ncasa, [[abitazione|abitazioni]], casa di campagna\na building\n",
    "the": "the /ðə/\nil (article)\n",
}


def _write_dictd(folder: Path, name: str, entries: dict[str, str], *, compress: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = "00-database-info\nA test dictionary\n"
    data, index = header, [f"00databaseinfo\t{_b64(0)}\t{_b64(len(header.encode()))}"]
    for head, text in entries.items():
        start = len(data.encode())
        data += text
        index.append(f"{head}\t{_b64(start)}\t{_b64(len(text.encode()))}")
    raw = data.encode()
    if compress:
        (folder / f"{name}.dict.dz").write_bytes(gzip.compress(raw))
    else:
        (folder / f"{name}.dict").write_bytes(raw)
    (folder / f"{name}.index").write_text("\n".join(index) + "\n", encoding="utf-8")
    return folder / f"{name}.index"


def test_parse_dictd_entry_skips_definitions():
    head, trans = parse_dictd_entry(ENTRIES["cat"])
    assert head == "cat"
    assert trans == ["gatto", "micio", "felino"]


def test_read_dictd_and_pairs(tmp_path):
    index = _write_dictd(tmp_path / "dictd", "freedict-eng-ita", ENTRIES)
    entries = read_dictd(index)
    assert entries["house"] == ["casa", "abitazioni", "casa di campagna"]
    assert entries["the"] == ["il"]
    pairs = read_pairs(index)
    assert ("house", "casa di campagna") not in pairs and ("house", "casa") in pairs
    assert ("cat", "micio") in pairs
    # uncompressed .dict, and the reverse direction joined by freedict_pairs
    _write_dictd(
        tmp_path / "dictd", "freedict-ita-eng", {"cane": "cane /kane/\ndog, hound\n"}, compress=False
    )
    both = freedict_pairs("en", "it", dictd_dir=tmp_path / "dictd")
    assert ("hound", "cane") in both and ("dog", "cane") in both
    assert both.count(("dog", "cane")) == 1
    with pytest.raises(FileNotFoundError, match="dict-freedict-eng-fin"):
        freedict_pairs("en", "fi", dictd_dir=tmp_path / "dictd")


def test_align_eval_without_a_dictionary_names_the_package_and_the_command(tmp_path, monkeypatch, capsys):
    """No FreeDict database installed: the message names the real Debian package and the command to install it."""
    import gfun.wordvectors.dictionaries as dictionaries
    from gfun.cli.main import main as gfun_main

    (tmp_path / "dictd").mkdir()
    code = gfun_main(["-q", "embeddings", "align-eval", "--source", "e5", "--tgt", "it",
                      "--dictd-dir", str(tmp_path / "dictd")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("gfun embeddings: error: no FreeDict dictionary for en-it"), err
    assert "`apt-get install dict-freedict-eng-ita`" in err and "--dictionary FILE" in err
    assert "{" not in err and "}" not in err
    # the package index decides which names are real: one direction only, or none at all
    monkeypatch.setattr(dictionaries, "_apt_package_names", lambda prefix: {"dict-freedict-fin-eng"})
    with pytest.raises(FileNotFoundError, match=r"package dict-freedict-fin-eng, e\.g\. `apt-get install "
                       r"dict-freedict-fin-eng`"):
        freedict_pairs("en", "fi", dictd_dir=tmp_path / "dictd")
    with pytest.raises(FileNotFoundError, match="Debian has none .*dict-freedict-eng-ja .*--dictionary FILE"):
        freedict_pairs("en", "ja", dictd_dir=tmp_path / "dictd")
    monkeypatch.setattr(dictionaries, "_apt_package_names", lambda prefix: None)  # no apt: both names offered
    with pytest.raises(FileNotFoundError, match=r"dict-freedict-eng-fin \(or dict-freedict-fin-eng\)"):
        freedict_pairs("en", "fi", dictd_dir=tmp_path / "dictd")


def test_read_pairs_text_files(tmp_path):
    tsv = tmp_path / "d.tsv"
    tsv.write_text("Cat\tGatto\n# comment\ndog\tcane\nice cream\tgelato\n\nbad\n", encoding="utf-8")
    assert read_pairs(tsv) == [("cat", "gatto"), ("dog", "cane")]
    muse = tmp_path / "d.txt"
    muse.write_text("cat gatto\ncat micio\n", encoding="utf-8")
    assert read_pairs(muse) == [("cat", "gatto"), ("cat", "micio")]


def test_split_pairs_holds_out_whole_source_words():
    pairs = [(f"w{i}", f"t{i}{j}") for i in range(50) for j in range(2)]
    train, test = split_pairs(pairs, 10, seed=3)
    test_src = {a for a, _ in test}
    assert len(test_src) == 10 and len(test) == 20
    assert not test_src & {a for a, _ in train}
    assert split_pairs(pairs, 10, seed=3) == (train, test)


# ----------------------------------------------------------------------------------------------
# evaluation
# ----------------------------------------------------------------------------------------------


def test_translation_precision_perfect_and_misses():
    rng = np.random.default_rng(0)
    tgt = rng.normal(size=(20, 8))
    src = tgt[:5] + 0.01 * rng.normal(size=(5, 8))
    src[4] = 0  # out of vocabulary: a miss
    out = translation_precision(src, tgt, [{0}, {1}, {2}, {3}, {4}])
    assert out == {"p1_cosine": 0.8, "p1_csls": 0.8, "n": 5}


def test_csls_reduces_hubness():
    # target 0 is a hub close to every query; CSLS penalises it
    rng = np.random.default_rng(1)
    dim = 30
    queries = rng.normal(size=(40, dim))
    tgt = queries + 1.2 * rng.normal(size=(40, dim))
    hub = queries.mean(axis=0) * 6
    tgt = np.vstack([hub, tgt])
    gold = [{i + 1} for i in range(40)]
    out = translation_precision(queries, tgt, gold, csls_k=5)
    assert out["p1_csls"] >= out["p1_cosine"]


def test_evaluate_alignment_procrustes_fixes_a_rotation():
    table, pairs, _ = _rotated_languages(n=400, noise=0.05)
    source = ArraySource(table)
    plain = evaluate_alignment(source, pairs, src="en", tgt="it", n_test=100, use_procrustes=False)
    refined = evaluate_alignment(source, pairs, src="en", tgt="it", n_test=100, use_procrustes=True)
    assert plain.n_test == 100 and plain.n_candidates == 400 and plain.coverage == 1.0
    assert plain.p1_cosine < 0.2
    assert refined.p1_cosine > 0.95 and refined.p1_csls > 0.95
    assert refined.n_train_pairs == 300
    assert set(refined.as_dict()) >= {"p1_cosine", "p1_csls", "procrustes", "seconds"}


# ----------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------


def test_cli_align_eval_on_vec_files(tmp_path, capsys):
    table, pairs, _ = _rotated_languages(n=120, noise=0.02)
    for lang in ("en", "it"):
        words = list(table[lang])
        _write_vec(tmp_path / f"{lang}.vec", words, np.stack([table[lang][w] for w in words]))
    dictionary = tmp_path / "pairs.tsv"
    dictionary.write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    argv = ["align-eval", "--source", f"vec:{tmp_path}/{{lang}}.vec", "--tgt", "it", "--n", "20",
            "--dictionary", str(dictionary), "--cache-dir", str(tmp_path / "cache"), "--json"]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["procrustes"] for r in rows] == [False, True]
    assert rows[1]["p1_cosine"] > 0.9 and rows[0]["n_test"] == 20
    assert main(argv[:-1]) == 0
    assert "P@1 CSLS" in capsys.readouterr().out


def test_cli_parser_registration_and_source_specs(tmp_path):
    import argparse

    parser = argparse.ArgumentParser(prog="gfun")
    add_embeddings_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["embeddings", "align-eval", "--source", "e5", "--src", "en", "--tgt", "it"])
    assert args.n == 1000 and args.procrustes == "both" and callable(args.func)
    assert isinstance(make_source("e5"), EncoderWordVectors)
    assert make_source("e5-subword").method == "subword-mean"
    assert isinstance(make_source(f"vec:{tmp_path}"), VecFileSource)
    with pytest.raises(ValueError, match="unknown word-vector source"):
        make_source("glove")


# ----------------------------------------------------------------------------------------------
# encoder-derived vectors (torch extra), on a tiny random BERT built here
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁the", "▁cat", "▁dog", "s", "▁il", "▁gatto", "▁cane",
              "▁query", ":", "a", "b", "c", "d", "e", "g", "i", "l", "o", "t"]  # fmt: skip
    vocab = [(p, 0.0 if i < 4 else -1.0 - 0.1 * i) for i, p in enumerate(pieces)]
    backend = Tokenizer(models.Unigram(vocab, unk_id=3))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=40,
    )  # fmt: skip
    folder = tmp_path_factory.mktemp("tiny-encoder")
    transformers.BertModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.mark.torch
@pytest.mark.parametrize("method", ["isolated", "subword-mean"])
def test_encoder_word_vectors(tiny_encoder, tmp_path, method, monkeypatch):
    vocab = ["the", "cats", "dog", "", "gatto", "dogs"]
    src = EncoderWordVectors(tiny_encoder, method=method, cache_dir=tmp_path, batch_size=2)
    assert src.dim == 32
    mat = src.vectors("en", vocab)
    assert mat.shape == (6, 32) and mat.dtype == np.float32
    assert not mat[3].any() and src.oov_share_["en"] == pytest.approx(1 / 6)
    np.testing.assert_allclose(np.linalg.norm(mat[[0, 1, 2, 4, 5]], axis=1), 1, rtol=1e-5)
    assert not np.allclose(mat[1], mat[2])
    cached = list((tmp_path / "wordvectors").glob("*.npy"))
    assert len(cached) == 1 and f"-{vocabulary_hash(vocab)}.npy" in cached[0].name
    # a second source reads the cache instead of encoding again
    again = EncoderWordVectors(tiny_encoder, method=method, cache_dir=tmp_path)
    monkeypatch.setattr(EncoderWordVectors, "_isolated", lambda *a: pytest.fail("re-encoded"))
    monkeypatch.setattr(EncoderWordVectors, "_subword_mean", lambda *a: pytest.fail("re-encoded"))
    np.testing.assert_array_equal(again.vectors("en", vocab), mat)


@pytest.mark.torch
def test_encoder_word_vectors_isolated_is_batch_invariant(tiny_encoder):
    torch = pytest.importorskip("torch")
    from gfun.encoders.resolver import load_encoder

    pair = load_encoder(tiny_encoder)
    one = EncoderWordVectors(pair, cache=False, batch_size=1).vectors("en", ["cats", "the", "dog"])
    many = EncoderWordVectors(pair, cache=False, batch_size=3).vectors("en", ["cats", "the", "dog"])
    np.testing.assert_allclose(one, many, atol=1e-5)
    # subword-mean is the mean of the input-embedding rows of the pieces
    sub = EncoderWordVectors(pair, method="subword-mean", cache=False, normalize=False).vectors(
        "en", ["cats"]
    )
    model, tok = pair
    ids = tok("cats", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        ref = model.get_input_embeddings().weight[ids].mean(dim=0).numpy()
    np.testing.assert_allclose(sub[0], ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(EncoderWordVectors(pair))
    with pytest.raises(ValueError):
        EncoderWordVectors(method="max")


@pytest.mark.torch
def test_encoder_word_bank_reuses_words_across_vocabularies(tiny_encoder, tmp_path, monkeypatch):
    first = EncoderWordVectors(tiny_encoder, cache_dir=tmp_path, batch_size=2)
    mat = first.vectors("en", ["the", "cats", "dog"])
    assert first.bank_path().is_file()
    encoded: list[list[str]] = []
    real = EncoderWordVectors._isolated

    def counting(self, words, *args):  # noqa: ANN001, ANN202
        encoded.append(list(words))
        return real(self, words, *args)

    monkeypatch.setattr(EncoderWordVectors, "_isolated", counting)
    # another process (a new source), another vocabulary, another language: only the new word is encoded
    other = EncoderWordVectors(tiny_encoder, cache_dir=tmp_path, batch_size=2)
    got = other.vectors("it", ["dog", "gatto", "cats"])
    assert encoded == [["gatto"]]
    np.testing.assert_allclose(got[[0, 2]], mat[[2, 1]], rtol=1e-6)
    np.testing.assert_allclose(got[1], first.vectors("it", ["gatto"])[0], rtol=1e-5, atol=1e-6)
    with np.load(other.bank_path()) as bank:
        assert sorted(bank["words"].tolist()) == ["cats", "dog", "gatto", "the"]
    # a damaged bank is ignored, not fatal
    other.bank_path().write_bytes(b"not an npz")
    third = EncoderWordVectors(tiny_encoder, cache_dir=tmp_path, batch_size=2)
    assert third.vectors("de", ["hund"]).shape == (1, 32)
