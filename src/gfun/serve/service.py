"""The model behind ``gfun serve``: loaded once, the checks of a request's documents and options, and the
predictions and explanations; independent of the web framework (:mod:`gfun.serve.app` puts it behind HTTP).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from gfun.errors import NonFiniteError, RequestError
from gfun.serve.json_body import loads

__all__ = ["DEFAULT_MAX_BATCH", "DEFAULT_MAX_BODY_BYTES", "MAX_EXPLAIN_BATCH", "MAX_TOP_WORDS", "ModelService"]

#: Most documents in one ``POST /predict``.
DEFAULT_MAX_BATCH = 256
#: Most documents in one ``POST /explain`` (and at most ``max_batch``): a document's explanation costs 2^k
#: meta-classifier decisions for k views, and one pass of each word view per word.
MAX_EXPLAIN_BATCH = 16
#: Most words per view and direction a ``POST /explain`` may ask for (``top_words``).
MAX_TOP_WORDS = 50
#: Largest request body, in bytes.
DEFAULT_MAX_BODY_BYTES = 8 * 2**20


def _where(index: int | None, field: str | None) -> str:
    parts = ([] if index is None else [f"document {index}"]) + ([] if field is None else [f"field {field!r}"])
    return ", ".join(parts)


class ModelService:
    """A loaded model, the checks of a request and the prediction; independent of the web framework.

    Parameters
    ----------
    model_dir : str or Path
        A model saved by ``gfun train`` (or :meth:`save`).
    max_batch : int
        Most documents per request (more: status 413).
    max_body_bytes : int
        Largest request body (larger: status 413).
    """

    def __init__(self, model_dir: str | Path, *, max_batch: int = DEFAULT_MAX_BATCH,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        from gfun.persistence.loading import load_model, read_manifest

        if max_batch < 1 or max_body_bytes < 1:
            raise ValueError(f"max_batch and max_body_bytes must be positive, got {max_batch} and {max_body_bytes}")
        self.model_dir = Path(model_dir)
        #: What the answers call the model: its directory's name, never its path.
        self.model_name = Path(os.path.abspath(model_dir)).name
        for _ in range(10):  # the manifest of the version loaded, even when a retraining moves CURRENT meanwhile
            manifest = read_manifest(model_dir)
            self.model = load_model(model_dir)
            self.manifest = read_manifest(model_dir)
            if self.manifest == manifest:
                break
        self.max_batch = int(max_batch)
        self.max_body_bytes = int(max_body_bytes)
        self.started = time.time()
        self._lock = threading.Lock()
        self.n_requests = 0
        self.n_documents = 0

    # ------------------------------------------------------------------ what the model is
    def views_covering(self, lang: str) -> list[str] | None:
        """Letters of the views that represent documents of ``lang`` (the zero-shot fallback views when no main
        view does); ``None`` for a model without views (the baselines)."""
        branches = getattr(self.model, "branches_", None)
        if branches is None:
            return None
        names = [b.name for b in branches if b.view.covers(lang)]
        if not names:
            names = [b.name for b in getattr(self.model, "fallback_branches_", []) if b.view.covers(lang)]
        return names

    def info(self) -> dict[str, Any]:
        """What ``GET /model`` answers: :func:`gfun.persistence.loading.model_description` and the request limits."""
        from gfun.persistence.loading import model_description

        return {**model_description(self.model, self.manifest, self.model_name),
                "limits": {"max_batch": self.max_batch, "max_body_bytes": self.max_body_bytes}}

    def health(self) -> dict[str, Any]:
        """What ``GET /health`` answers."""
        from gfun import __version__

        return {"status": "ok", "model": self.model_name, "created": self.manifest.get("created"),
                "gfun_version": __version__,
                "uptime_s": round(time.time() - self.started, 1), "requests": self.n_requests,
                "documents": self.n_documents}

    # ------------------------------------------------------------------ a request
    def parse(self, body: bytes) -> tuple[list[dict[str, Any]], int | None]:
        """The documents and ``top_k`` of a ``POST /predict`` body; :class:`RequestError` for a malformed one."""
        records, options = self._documents(body, {"top_k": _non_negative_top_k}, self.max_batch,
                                           "(send smaller batches, or raise gfun serve --max-batch)")
        return records, options["top_k"]

    def parse_explain(self, body: bytes) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The documents and options (``top_k``, ``top_words``, ``labels``) of a ``POST /explain`` body;
        :class:`RequestError` for a malformed one."""
        classes = set(self.model.classes_)
        records, options = self._documents(
            body, {"top_k": _positive_top_k, "top_words": _top_words, "labels": lambda v: _labels(v, classes)},
            min(self.max_batch, MAX_EXPLAIN_BATCH), "for /explain (explanations cost far more than predictions: "
                                                    "send smaller batches)")
        if options["top_k"] is not None and options["labels"] is not None:
            raise RequestError(422, "give 'labels' or 'top_k', not both", field="top_k")
        return records, options

    def _documents(self, body: bytes, options: dict[str, Any], max_docs: int, advice: str,
                   ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The documents of a body and its ``options`` (name -> a check returning the value, None when absent)."""
        if len(body) > self.max_body_bytes:
            raise RequestError(413, f"the request body has {len(body)} bytes, more than the limit of "
                                    f"{self.max_body_bytes} (gfun serve --max-body-mb)")
        payload = loads(body)
        shape = 'expected a JSON object {"documents": [{"text": "...", "lang": "..."}, ...]}'
        if not isinstance(payload, dict):
            raise RequestError(422, f"{shape}, got a JSON {type(payload).__name__}")
        unknown = sorted(set(payload) - {"documents", *options})
        if unknown:
            optional = " and optionally " + ", ".join(f'"{name}"' for name in options)
            raise RequestError(422, f"unknown field(s) {unknown}; {shape}{optional}", field=unknown[0])
        docs = payload.get("documents")
        if not isinstance(docs, list):
            raise RequestError(422, f"{shape}; 'documents' is {'missing' if docs is None else type(docs).__name__}",
                               field="documents")
        if not docs:
            raise RequestError(422, "'documents' is empty: send at least one document", field="documents")
        if len(docs) > max_docs:
            raise RequestError(413, f"{len(docs)} documents in one request, more than the limit of {max_docs} "
                                    f"{advice}", field="documents")
        values = {}
        for name, check in options.items():
            value = payload.get(name)
            values[name] = None if value is None else check(value)
        records = []
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict):
                raise RequestError(422, f"document {i}: expected a JSON object with 'text' (and optionally 'lang', "
                                        f"'id'), got {type(doc).__name__}", index=i)
            extra = sorted(set(doc) - {"id", "lang", "text"})
            if extra:
                raise RequestError(422, f"document {i}: unknown field(s) {extra}; a document has 'text' and "
                                        "optionally 'lang' and 'id'", index=i, field=extra[0])
            text = doc.get("text")
            if not isinstance(text, str):  # before the language, which is detected from it
                reason = ("missing required field 'text'" if text is None
                          else f"expected a string, got {type(text).__name__}")
                raise RequestError(422, f"document {i}, field 'text': {reason}", index=i, field="text")
            # the document's line, for the corpus and the language detector; its id, when missing, and its
            # language are filled in by predict (as gfun predict fills them in)
            records.append({**doc, "__line__": i + 1})
        return records, values

    def _corpus(self, records: list[dict[str, Any]]) -> tuple[Any, list[bool]]:
        """The documents of a request as a corpus (ids numbered, languages detected where missing, as ``gfun
        predict`` reads a file) and which languages were detected; :class:`RequestError` for an invalid one."""
        from gfun.corpus.multilingual import MultilingualCorpus
        from gfun.errors import CorpusFormatError, LanguageDetectionError
        from gfun.predictions import complete_records

        languages = list(getattr(self.model, "languages_", []))
        try:
            records, detected = complete_records(records, languages=languages)  # ids numbered, languages found
            docs = MultilingualCorpus.from_records(records, list(self.model.classes_), on_unknown_label="ignore",
                                                   on_missing_labels="negative")
        except CorpusFormatError as exc:  # LanguageDetectionError included
            index = exc.index if isinstance(exc, LanguageDetectionError) else (
                None if exc.line is None else exc.line - 1)
            where = _where(index, exc.field)
            raise RequestError(422, f"{where}: {exc.reason}" if where else exc.reason, index=index,
                               field=exc.field) from None
        return docs, detected

    def predict(self, records: list[dict[str, Any]], top_k: int | None = None) -> dict[str, Any]:
        """Label the documents (records as :meth:`parse` returns them); :class:`RequestError` for an invalid one."""
        from gfun.errors import UnseenLanguageError
        from gfun.predictions import prediction_records

        t0 = time.perf_counter()
        with self._lock:
            docs, detected = self._corpus(records)
            try:
                out = prediction_records(self.model, docs, detected=detected)
            except UnseenLanguageError as exc:
                raise _unseen(exc, docs) from None
            except NonFiniteError as exc:  # the model gives no number for these documents: say so, not a traceback
                raise RequestError(422, f"the model cannot score these documents: {exc}") from None
            self.n_requests += 1
            self.n_documents += len(docs)
        for rec in out:
            rec["views"] = self.views_covering(rec["lang"])
            if "probabilities" in rec:
                ranked = sorted(rec["probabilities"].items(), key=lambda kv: -kv[1])
                rec["probabilities"] = dict(ranked if top_k is None else ranked[:top_k])
        return {"predictions": out, "seconds": round(time.perf_counter() - t0, 4)}

    def explain(self, records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
        """Explain the model's decisions for the documents (records and options as :meth:`parse_explain` returns
        them); :class:`RequestError` for an invalid document or a model without views."""
        from gfun.errors import UnseenLanguageError

        if not callable(getattr(self.model, "explain", None)):
            raise RequestError(422, f"this model ({type(self.model).__name__}) has no views to explain")
        t0 = time.perf_counter()
        top_words = options.get("top_words")
        with self._lock:
            docs, detected = self._corpus(records)
            try:
                explained = self.model.explain(docs, labels=options.get("labels"), top_k=options.get("top_k"),
                                               top_words=10 if top_words is None else top_words)
            except UnseenLanguageError as exc:
                raise _unseen(exc, docs) from None
            except (NonFiniteError, ValueError) as exc:
                raise RequestError(422, f"the model cannot explain these documents: {exc}") from None
            self.n_requests += 1
            self.n_documents += len(docs)
        out = [{**doc.to_dict(), "lang_detected": was} for doc, was in zip(explained, detected, strict=True)]
        return {"explanations": out, "aggregation": explained.aggregation, "views": explained.views,
                "seconds": round(time.perf_counter() - t0, 4)}


def _unseen(exc: Exception, docs: Any) -> RequestError:
    """The refusal of a document whose language the model cannot serve."""
    index = next((i for i, lang in enumerate(docs.langs) if lang in exc.languages), None)
    lang = docs.langs[index] if index is not None else None
    head = f"document {index} (lang {lang!r})" if index is not None else "a document"
    return RequestError(422, f"{head}: {exc}", index=index, field="lang")


def _non_negative_top_k(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RequestError(422, f"'top_k' must be a non-negative integer or null, got {value!r}", field="top_k")
    return value


def _positive_top_k(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestError(422, f"'top_k' must be a positive integer or null, got {value!r}", field="top_k")
    return value


def _top_words(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOP_WORDS:
        raise RequestError(422, f"'top_words' must be an integer from 0 to {MAX_TOP_WORDS} or null, got {value!r}",
                           field="top_words")
    return value


def _labels(value: Any, classes: set[str]) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise RequestError(422, f"'labels' must be a non-empty list of class names or null, got "
                                f"{type(value).__name__}", field="labels")
    unknown = sorted({v for v in value if v not in classes})
    if unknown:
        raise RequestError(422, f"'labels': {len(unknown)} unknown class(es), e.g. {unknown[0][:100]!r} (GET /model "
                                "lists the classes)", field="labels")
    return list(dict.fromkeys(value))

