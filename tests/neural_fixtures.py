"""Tiny neural models built inside the tests: a random BERT with a WordPiece tokenizer trained on the test texts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

#: How far a neural view's vector of a document may move with the other documents of its batch (``rtol``, ``atol``
#: of ``numpy.testing.assert_allclose``). It does not move on this project's machines in float32, but matrix
#: products of other shapes round differently on some CPUs: up to 2.2e-4 was seen on a CI machine, 4.7e-4 under
#: bfloat16 autocast on a Xeon with AMX. A view that lets the padding of its batch in moves it more
#: (tests/views/test_transformer.py::test_the_batch_tolerance_still_sees_padding_let_in).
BATCH_TOLERANCE = {"rtol": 5e-4, "atol": 5e-4}


def train_test_texts(langs: Sequence[str], n_train: int, n_test: int) -> dict:
    """Synthetic training documents (``texts``, ``langs``, ``Y``; seed 0) and test documents (``test_texts``,
    ``test_langs``; seed 1) of ``n_train`` / ``n_test`` documents per language."""
    from tests.synthetic_vectors import make_corpus

    texts, lang_arr, Y = make_corpus(langs, n_train, seed=0)
    test_texts, test_langs, _ = make_corpus(langs, n_test, seed=1)
    return {"texts": texts, "langs": lang_arr, "Y": Y, "test_texts": test_texts, "test_langs": test_langs}


def single_torch_thread() -> Iterator[None]:
    """Run a test module's torch work on one thread (small models: threads only add overhead), then restore."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_bert_folder(path: Path, texts: Sequence[str], *, hidden: int = 32, layers: int = 2, heads: int = 2,
                     max_positions: int = 64, vocab_size: int = 300) -> Path:
    """Save a randomly initialised BERT (``hidden`` x ``layers``) and a WordPiece tokenizer trained on ``texts``."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.train_from_iterator(list(texts), trainers.WordPieceTrainer(vocab_size=vocab_size,
                                                                       special_tokens=special))
    cls_id, sep_id = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                               cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    config = transformers.BertConfig(vocab_size=backend.get_vocab_size(), hidden_size=hidden,
                                     num_hidden_layers=layers, num_attention_heads=heads,
                                     intermediate_size=2 * hidden, max_position_embeddings=max_positions,
                                     pad_token_id=backend.token_to_id("[PAD]"))
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = transformers.BertModel(config)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
