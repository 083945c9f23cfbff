"""``gfun serve``: a saved model behind a small HTTP API, with a page to try it.

The model is loaded once (:func:`gfun.persistence.loading.load_model`) and shared by every request; predictions
run one at a time under a lock (in a worker thread, so ``/health`` answers while a batch is being labelled).
Documents are completed and validated as ``gfun predict`` completes and validates a file
(:func:`gfun.predictions.complete_records`: a document without an id gets its position, one without a language has
it detected; :meth:`gfun.corpus.multilingual.MultilingualCorpus.from_records`), and every refusal is a JSON object
with a 4xx status::

    {"detail": "document 1, field 'text': expected a string, got int", "index": 1, "field": "text"}

Endpoints
---------
``POST /predict``
    ``{"documents": [{"text": "...", "lang": "de", "id": "a"}, ...], "top_k": 5}`` (``lang``, ``id`` and ``top_k``
    optional) -> ``{"predictions": [{"id", "lang", "lang_detected", "labels", "probabilities", "views"}, ...]}``;
    ``probabilities`` lists the classes by decreasing probability (the ``top_k`` first).
``POST /explain``
    ``{"documents": [...], "top_words": 8, "top_k": 3, "labels": ["..."]}`` (every field but ``documents``
    optional; at most :data:`MAX_EXPLAIN_BATCH` documents) -> ``{"explanations": [{"id", "lang", "lang_detected",
    "labels", "explained": [{"label", "predicted", "decision", "base_value", "probability", "views": [{"view",
    "contribution", "used", "note", "posterior", "word_measure", "words_up", "words_down", ...}]}]}], "aggregation",
    "views"}``: for each label explained (the predicted ones by default), the decision split into a base value and
    each view's contribution, and the words that pushed the label up or down
    (:mod:`gfun.funnelling.explanation`; models without views, the baselines, are refused with 422).
``GET /model``
    Classes, languages, views (and which languages each covers), the selected views, the training settings,
    the gfun version that saved the model and the one serving it.
``GET /health``
    ``{"status": "ok", ...}``.
``GET /``
    The page (plain HTML, CSS and JavaScript shipped with gfun; nothing is fetched from elsewhere).
``GET /docs``, ``GET /openapi.json``
    The API description (an offline page rendering the OpenAPI document).

Limits and checks (:func:`serve`'s parameters; the ``gfun serve`` options in brackets)
------------------------------------------------------------------------------------
Before the application sees a request, :class:`RequestGuard` refuses, with a JSON error and ``Connection: close``:
a ``Host`` header naming another host than the allowed ones (400; against DNS rebinding; ``--allow-host``), a
``POST`` whose ``Content-Type`` is not ``application/json`` (415: the encodings a page on another origin can send
without a preflight are refused), a body over ``max_body_bytes`` (413; ``--max-body-mb``) and a body that does not
arrive whole within ``body_timeout`` seconds of its headers (408; ``--body-timeout``). :meth:`ModelService.parse`
refuses with 400 a body that is not UTF-8 JSON, JSON nested deeper than :data:`MAX_JSON_DEPTH`, numbers longer than
:data:`MAX_NUMBER_CHARS` characters or not finite, and strings with lone surrogates. Uvicorn (its pure-Python h11
protocol) closes a connection whose request line and headers do not arrive within ``header_timeout`` seconds
(``--header-timeout``; idle keep-alive connections after ``keep_alive_timeout``, ``--keep-alive-timeout``), answers
400 to headers over 16 KiB, and 503 to requests on connections beyond ``max_connections`` (``--max-connections``).
Responses name the model by its directory's name, never its path.

The model is loaded once, at start: a model retrained into the same directory while the server runs is not picked
up (the server keeps answering with the version it loaded, whole and consistent; ``created`` in ``/health`` and
``/model`` says which); restart the server to serve the new version.

The web stack (FastAPI, uvicorn) is the optional extra ``serve``: ``pip install 'gfun[serve]'``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import threading
import time
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from gfun.errors import NonFiniteError, RequestError

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_HEADER_TIMEOUT", "DEFAULT_KEEP_ALIVE_TIMEOUT", "DEFAULT_MAX_BATCH",
           "DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_CONNECTIONS", "LOCAL_HOSTS", "MAX_EXPLAIN_BATCH", "MAX_JSON_DEPTH",
           "MAX_NUMBER_CHARS", "MAX_TOP_WORDS",
           "ModelService", "RequestError", "RequestGuard", "allowed_host_names", "create_app", "serve"]

logger = logging.getLogger(__name__)

#: Most documents in one ``POST /predict``.
DEFAULT_MAX_BATCH = 256
#: Most documents in one ``POST /explain`` (and at most ``max_batch``): a document's explanation costs 2^k
#: meta-classifier decisions for k views, and one pass of each word view per word.
MAX_EXPLAIN_BATCH = 16
#: Most words per view and direction a ``POST /explain`` may ask for (``top_words``).
MAX_TOP_WORDS = 50
#: Largest request body, in bytes.
DEFAULT_MAX_BODY_BYTES = 8 * 2**20
#: Seconds a request's body may take to arrive whole, counted from the end of its headers (later: 408).
DEFAULT_BODY_TIMEOUT = 30.0
#: Seconds a connection may take to send a request's line and headers (from its opening or the previous response).
DEFAULT_HEADER_TIMEOUT = 10.0
#: Seconds an idle keep-alive connection stays open.
DEFAULT_KEEP_ALIVE_TIMEOUT = 5.0
#: Most connections open at once; requests on connections beyond them are answered 503.
DEFAULT_MAX_CONNECTIONS = 32
#: Host names always accepted in the ``Host`` header (besides the address the server is bound to).
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Deepest nesting of arrays and objects in a request body (a valid request needs 3).
MAX_JSON_DEPTH = 16
#: Longest number, in characters, in a request body.
MAX_NUMBER_CHARS = 64
#: Files of the page, served under ``/static/`` (and ``/`` for ``index.html``).
STATIC_FILES = {"index.html": "text/html", "page.js": "text/javascript", "page.css": "text/css",
                "docs.html": "text/html"}


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
        payload = _loads(body)
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


class _Refused(Exception):
    """A body refused while it is decoded (raised from the JSON decoder's hooks)."""


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def _nesting_depth(body: bytes) -> int:
    """Deepest nesting of ``[`` and ``{`` in ``body`` outside strings (without decoding it, so without recursion)."""
    import numpy as np

    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0
    codes = np.frombuffer(_JSON_STRING.sub(b"", body), dtype=np.uint8)
    steps = np.isin(codes, (91, 123)).astype(np.int64) - np.isin(codes, (93, 125))
    return int(np.cumsum(steps).max(initial=0))


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARS:
            raise _Refused(f"a number of {len(text)} characters, more than the limit of {MAX_NUMBER_CHARS}")
        value = kind(text)
        if kind is float and not math.isfinite(value):
            raise _Refused(f"the number {text} is too large for a 64-bit float")
        return value
    return parse


def _not_json(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _strings_and_depth(payload: Any) -> None:
    """Refuse strings with lone surrogates (not Unicode text) and nesting beyond :data:`MAX_JSON_DEPTH`."""
    stack: list[tuple[Any, int]] = [(payload, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            items: Iterable[Any] = (value,)
        elif isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise _Refused(f"arrays and objects nested more than {MAX_JSON_DEPTH} deep")
            items = value.keys() if isinstance(value, dict) else ()
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
        else:
            continue
        for text in items:
            if isinstance(text, str) and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise _Refused(f"a string holds the lone surrogate \\u{ord(text[exc.start]):04x}, which is "
                                   "not Unicode text") from None


def _loads(body: bytes) -> Any:
    """``body`` decoded as JSON (strict UTF-8, no ``NaN``/``Infinity``, bounded nesting and numbers); 400 if not."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(400, f"the request body is not valid UTF-8 (byte {exc.start})") from None
    try:
        if _nesting_depth(body) > MAX_JSON_DEPTH:
            raise _Refused(f"arrays and objects nested more than {MAX_JSON_DEPTH} deep")
        payload = json.loads(text, parse_int=_number(int), parse_float=_number(float), parse_constant=_not_json)
        _strings_and_depth(payload)
    except json.JSONDecodeError as exc:
        raise RequestError(400, f"the request body is not valid JSON ({exc.msg} at line {exc.lineno} column "
                                f"{exc.colno})") from None
    except _Refused as exc:
        raise RequestError(400, f"the request body is refused: {exc}") from None
    except RecursionError:  # not expected after the nesting check; still a refusal, never a crash
        raise RequestError(400, f"the request body is refused: arrays and objects nested more than "
                                f"{MAX_JSON_DEPTH} deep") from None
    return payload


# ---------------------------------------------------------------------------------------------- before the app
def _host_name(value: str) -> str | None:
    """The host of a ``Host`` header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``), lower case; ``None`` if
    it is malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, port = value[1:].partition("]")
        if not bracket or (port and not (port[0] == ":" and port[1:].isdigit())):
            return None
        return name
    name, colon, port = value.partition(":")
    if (colon and not port.isdigit()) or not name:
        return None
    return name


def allowed_host_names(bound: str | None, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The names :class:`RequestGuard` accepts in ``Host``: :data:`LOCAL_HOSTS`, the address the server is bound
    to (unless a wildcard) and ``extra``; ``None`` (any) if ``extra`` holds ``*``."""
    extra = [h.strip().lower() for h in extra if h.strip()]
    if "*" in extra:
        return None
    names = set(LOCAL_HOSTS)
    if bound and bound not in ("0.0.0.0", "::", "[::]"):
        names.add(bound.lower())
    names.update(extra)
    return frozenset(n[1:-1] if n.startswith("[") and n.endswith("]") else n for n in names)


def _json_content_type(values: list[str]) -> bool:
    if len(values) != 1:
        return False
    media, *params = values[0].split(";")
    if media.strip().lower() != "application/json":
        return False
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


class RequestGuard:
    """ASGI middleware: the checks every request passes before the application sees it (see the module docstring).

    Parameters
    ----------
    app : ASGI application
    allowed_hosts : frozenset of str or None
        Host names accepted in the ``Host`` header (:func:`allowed_host_names`); ``None``: any.
    max_body_bytes : int
        Largest body (larger: 413).
    body_timeout : float
        Seconds the body may take to arrive whole, from the end of the headers (later: 408).

    A refused request is answered with a JSON error and ``Connection: close``, without reading the rest of its
    body; an accepted one reaches the application with its body read whole.
    """

    def __init__(self, app: Any, *, allowed_hosts: frozenset[str] | None, max_body_bytes: int,
                 body_timeout: float) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.max_body_bytes = int(max_body_bytes)
        self.body_timeout = float(body_timeout)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            body = await self._check(scope, receive)
        except RequestError as exc:
            return await _refuse(send, exc)
        if body is None:  # the client went away
            return None
        delivered = False

        async def replay() -> dict:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _check(self, scope: dict, receive: Any) -> bytes | None:
        headers: dict[str, list[str]] = {}
        for name, value in scope.get("headers", []):
            headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        hosts = headers.get("host", [])
        if self.allowed_hosts is not None:
            if len(hosts) != 1:
                raise RequestError(400, "the request needs exactly one Host header")
            name = _host_name(hosts[0])
            if name not in self.allowed_hosts:
                raise RequestError(400, f"the Host header {hosts[0][:100]!r} names a host this server does not "
                                        "answer for (gfun serve --allow-host)")
        if scope.get("method") == "POST" and not _json_content_type(headers.get("content-type", [])):
            got = headers.get("content-type")
            raise RequestError(415, "the request body must be JSON, sent with 'Content-Type: application/json'; "
                                    f"got {'no Content-Type' if not got else repr(', '.join(got)[:100])}")
        limit = self.max_body_bytes
        for length in headers.get("content-length", []):
            if length.strip().isdigit() and int(length) > limit:
                raise RequestError(413, f"the request body has {int(length)} bytes, more than the limit of {limit} "
                                        "(gfun serve --max-body-mb)")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        chunks, size, more = [], 0, True
        while more:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(deadline - loop.time(), 0.0))
            except TimeoutError:
                raise RequestError(408, f"the request body did not arrive within {self.body_timeout:g} s "
                                        "(gfun serve --body-timeout)") from None
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise RequestError(413, f"the request body is larger than the limit of {limit} bytes "
                                        "(gfun serve --max-body-mb)")
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)


async def _refuse(send: Any, exc: RequestError) -> None:
    body = json.dumps(exc.payload()).encode()
    await send({"type": "http.response.start", "status": exc.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _protocol(header_timeout: float) -> type:
    """Uvicorn's h11 protocol, closing a connection whose request line and headers take over ``header_timeout``
    seconds (from its opening or from the previous response): slow or absent headers do not hold it open."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                logger.debug("closing a connection whose request headers took over %g s", header_timeout)
                try:
                    self.conn.send(h11.ConnectionClosed())
                except h11.LocalProtocolError:
                    pass
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutH11Protocol


# ---------------------------------------------------------------------------------------------- the web app
def static_file(name: str) -> bytes:
    """A file of the page (see :data:`STATIC_FILES`), read from the installed package."""
    return resources.files("gfun.serve").joinpath("static", name).read_bytes()


def _schemas() -> dict[str, Any]:
    """OpenAPI schemas of the request and response bodies (pydantic models; only for the documentation)."""
    from pydantic import BaseModel, Field

    class Document(BaseModel):
        text: str = Field(description="the document's text")
        lang: str | None = Field(None, description="its language code as the model knows it (e.g. 'de'); "
                                                   "detected when missing")
        id: str | int | None = Field(None, description="echoed back (default: the document's position)")

    class PredictRequest(BaseModel):
        documents: list[Document] = Field(description="the documents to label (at most the server's max_batch)")
        top_k: int | None = Field(None, ge=0, description="how many class probabilities to return per document, "
                                                          "most probable first (default: all)")

    class Prediction(BaseModel):
        id: str
        lang: str
        lang_detected: bool = Field(description="whether the language was detected (the document had none)")
        labels: list[str] = Field(description="predicted classes")
        probabilities: dict[str, float] | None = Field(None, description="class -> probability, decreasing")
        views: list[str] | None = Field(description="letters of the views that cover the document's language")

    class PredictResponse(BaseModel):
        predictions: list[Prediction]
        seconds: float

    class ExplainRequest(BaseModel):
        documents: list[Document] = Field(description=f"the documents to explain (at most {MAX_EXPLAIN_BATCH}, and "
                                                      "at most the server's max_batch)")
        top_words: int | None = Field(None, ge=0, le=MAX_TOP_WORDS, description="most words per view and direction "
                                                                                "(default 10; 0: none)")
        top_k: int | None = Field(None, ge=1, description="explain each document's k best-scoring labels (default: "
                                                          "the predicted ones, or the best one when none is)")
        labels: list[str] | None = Field(None, description="explain these labels for every document")

    class WordEffect(BaseModel):
        term: str = Field(description="the term as the view weighs it (a stem for X)")
        words: list[str] = Field(description="the words of the text behind it")
        value: float = Field(description="how much it pushed the label (see word_measure)")

    class ViewContribution(BaseModel):
        view: str
        contribution: float = Field(description="Shapley value, in units of the decision")
        used: bool
        note: str
        posterior: float | None
        word_measure: str | None = Field(description="svm-term: w*x terms of the view's SVM score; "
                                                     "posterior-change: the view's posterior minus its posterior "
                                                     "without the word; decision-change: the same for the decision")
        view_score: float | None
        intercept: float | None
        words_up: list[WordEffect]
        words_down: list[WordEffect]

    class LabelExplanation(BaseModel):
        label: str
        predicted: bool
        decision: float = Field(description="base_value + the views' contributions")
        base_value: float
        probability: float | None
        views: list[ViewContribution]

    class DocumentExplanation(BaseModel):
        id: str
        lang: str
        lang_detected: bool
        labels: list[str]
        explained: list[LabelExplanation]

    class ExplainResponse(BaseModel):
        explanations: list[DocumentExplanation]
        aggregation: str
        views: list[str]
        seconds: float

    class Error(BaseModel):
        detail: str
        index: int | None = Field(None, description="position of the document the error is about")
        field: str | None = None

    return {"PredictRequest": PredictRequest, "PredictResponse": PredictResponse, "ExplainRequest": ExplainRequest,
            "ExplainResponse": ExplainResponse, "Error": Error}


def create_app(service: ModelService, *, allowed_hosts: frozenset[str] | None = frozenset(LOCAL_HOSTS),
               body_timeout: float = DEFAULT_BODY_TIMEOUT) -> Any:
    """The ASGI application (FastAPI) serving ``service``, behind a :class:`RequestGuard` (``allowed_hosts``:
    the names accepted in the ``Host`` header, ``None`` for any; ``body_timeout``: seconds for a body to arrive)."""
    from gfun.core.optional import import_optional

    fastapi = import_optional("fastapi", extra="serve", purpose="gfun serve")
    from fastapi.openapi.utils import get_openapi
    from fastapi.responses import JSONResponse, Response
    from starlette.concurrency import run_in_threadpool

    from gfun import __version__

    schemas = _schemas()
    app = fastapi.FastAPI(title="gfun", version=__version__, docs_url=None, redoc_url=None,
                          description="Cross-lingual multilabel text classification with a saved gfun model.")
    app.state.service = service
    app.add_middleware(RequestGuard, allowed_hosts=allowed_hosts, max_body_bytes=service.max_body_bytes,
                       body_timeout=body_timeout)

    @app.exception_handler(RequestError)
    async def refused(request: Any, exc: RequestError) -> Any:
        return JSONResponse(exc.payload(), status_code=exc.status)

    def page(name: str) -> Any:
        return Response(static_file(name), media_type=STATIC_FILES[name] + "; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})

    @app.get("/", include_in_schema=False)
    def index() -> Any:
        return page("index.html")

    @app.get("/docs", include_in_schema=False)
    def docs() -> Any:
        return page("docs.html")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Any:
        if name not in STATIC_FILES:
            return JSONResponse({"detail": f"no static file {name!r}"}, status_code=404)
        return page(name)

    @app.get("/health", summary="Liveness: the model is loaded and the service answers")
    def health() -> dict[str, Any]:
        return service.health()

    @app.get("/model", summary="The served model: classes, languages, views, training settings, versions")
    def model() -> dict[str, Any]:
        return service.info()

    error = {"model": schemas["Error"]}

    async def predict(request):  # type: ignore[no-untyped-def]  # annotated below: FastAPI injects the request
        records, top_k = service.parse(await request.body())  # read whole, in time and within limits by the guard
        return await run_in_threadpool(service.predict, records, top_k)

    predict.__annotations__ = {"request": fastapi.Request, "return": Any}
    app.post("/predict", summary="Label a batch of documents",
             responses={200: {"model": schemas["PredictResponse"]}, 400: error, 408: error, 413: error, 415: error,
                        422: error},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/PredictRequest"}}}}})(predict)

    async def explain(request):  # type: ignore[no-untyped-def]  # annotated below, as predict
        records, options = service.parse_explain(await request.body())
        return await run_in_threadpool(service.explain, records, options)

    explain.__annotations__ = {"request": fastapi.Request, "return": Any}
    app.post("/explain", summary="Explain the labels of a few documents: each view's contribution and the words",
             responses={200: {"model": schemas["ExplainResponse"]}, 400: error, 408: error, 413: error, 415: error,
                        422: error},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/ExplainRequest"}}}}})(explain)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = spec.setdefault("components", {}).setdefault("schemas", {})
            for name in ("PredictRequest", "ExplainRequest"):
                request_schema = schemas[name].model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(request_schema.pop("$defs", {}))
                components[name] = request_schema
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi
    return app


def serve(model_dir: str | Path, *, host: str = "127.0.0.1", port: int = 8000, max_batch: int = DEFAULT_MAX_BATCH,
          max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, max_connections: int = DEFAULT_MAX_CONNECTIONS,
          header_timeout: float = DEFAULT_HEADER_TIMEOUT, body_timeout: float = DEFAULT_BODY_TIMEOUT,
          keep_alive_timeout: float = DEFAULT_KEEP_ALIVE_TIMEOUT, allow_hosts: Iterable[str] = (),
          log_level: str = "info") -> None:
    """Load the model in ``model_dir`` and serve it over HTTP until interrupted (see the module docstring).

    ``allow_hosts``: names accepted in the ``Host`` header besides :data:`LOCAL_HOSTS` and ``host`` (``"*"``: any).
    """
    from gfun.core.optional import import_optional

    for name, value in (("max_connections", max_connections), ("header_timeout", header_timeout),
                        ("body_timeout", body_timeout), ("keep_alive_timeout", keep_alive_timeout)):
        if not value > 0 or not math.isfinite(value):
            raise ValueError(f"{name} must be a positive number, got {value}")
    import_optional("fastapi", extra="serve", purpose="gfun serve")
    uvicorn = import_optional("uvicorn", extra="serve", purpose="gfun serve")
    service = ModelService(model_dir, max_batch=max_batch, max_body_bytes=max_body_bytes)
    hosts = allowed_host_names(host, allow_hosts)
    app = create_app(service, allowed_hosts=hosts, body_timeout=body_timeout)
    # the access log has a line per request already; the detector's counts would add two more
    logging.getLogger("gfun.text.langid").setLevel(logging.WARNING)
    try:  # load the language detector now rather than in the first request without a language
        from gfun.text.langid import supported_languages

        supported_languages()
    except ImportError as exc:
        logger.warning("documents without 'lang' will be refused: %s", exc)
    shown = f"[{host}]" if ":" in host else host
    logger.info("serving %s (%s, %d classes, languages %s) on http://%s:%d/ (API description: /docs)",
                model_dir, service.manifest.get("estimator"), len(service.model.classes_),
                ", ".join(getattr(service.model, "languages_", [])), shown, port)
    if hosts is not None and host in ("0.0.0.0", "::"):
        logger.warning("listening on every interface, but answering only requests addressed to %s "
                       "(add the names clients use with --allow-host)", ", ".join(sorted(hosts)))
    # limit_concurrency counts the connection asking too: max_connections + 1 lets that many hold a request each
    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1, http=_protocol(header_timeout),
                limit_concurrency=int(max_connections) + 1, timeout_keep_alive=keep_alive_timeout)
