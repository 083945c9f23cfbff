"""``gfun serve``: a saved model behind a small HTTP API, with a page to try it.

The model is loaded once (:func:`gfun.persistence.loading.load_model`) and shared by every request; predictions
run one at a time under a lock (in a worker thread, so ``/health`` answers while a batch is being labelled).
Documents are validated as ``gfun predict`` validates a file
(:meth:`gfun.corpus.multilingual.MultilingualCorpus.from_records`), a document without a language has it detected
(:func:`gfun.text.langid.fill_missing_languages`, as ``gfun predict --detect-language``), and every refusal is a
JSON object with a 4xx status::

    {"detail": "document 1, field 'text': expected a string, got int", "index": 1, "field": "text"}

Endpoints
---------
``POST /predict``
    ``{"documents": [{"text": "...", "lang": "de", "id": "a"}, ...], "top_k": 5}`` (``lang``, ``id`` and ``top_k``
    optional) -> ``{"predictions": [{"id", "lang", "lang_detected", "labels", "probabilities", "views"}, ...]}``;
    ``probabilities`` lists the classes by decreasing probability (the ``top_k`` first).
``GET /model``
    Classes, languages, views (and which languages each covers), the selected views, the training settings,
    the gfun version that saved the model and the one serving it.
``GET /health``
    ``{"status": "ok", ...}``.
``GET /``
    The page (plain HTML, CSS and JavaScript shipped with gfun; nothing is fetched from elsewhere).
``GET /docs``, ``GET /openapi.json``
    The API description (an offline page rendering the OpenAPI document).

The web stack (FastAPI, uvicorn) is the optional extra ``serve``: ``pip install 'gfun[serve]'``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

from gfun.errors import RequestError

__all__ = ["DEFAULT_MAX_BATCH", "DEFAULT_MAX_BODY_BYTES", "ModelService", "RequestError", "create_app", "serve"]

logger = logging.getLogger(__name__)

#: Most documents in one ``POST /predict``.
DEFAULT_MAX_BATCH = 256
#: Largest request body, in bytes.
DEFAULT_MAX_BODY_BYTES = 8 * 2**20
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
        self.manifest = read_manifest(model_dir)
        self.model = load_model(model_dir)
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

        return {**model_description(self.model, self.manifest, self.model_dir),
                "limits": {"max_batch": self.max_batch, "max_body_bytes": self.max_body_bytes}}

    def health(self) -> dict[str, Any]:
        """What ``GET /health`` answers."""
        from gfun import __version__

        return {"status": "ok", "model": str(self.model_dir), "gfun_version": __version__,
                "uptime_s": round(time.time() - self.started, 1), "requests": self.n_requests,
                "documents": self.n_documents}

    # ------------------------------------------------------------------ a request
    def parse(self, body: bytes) -> tuple[list[dict[str, Any]], int | None]:
        """The documents and ``top_k`` of a ``POST /predict`` body; :class:`RequestError` for a malformed one."""
        if len(body) > self.max_body_bytes:
            raise RequestError(413, f"the request body has {len(body)} bytes, more than the limit of "
                                    f"{self.max_body_bytes} (gfun serve --max-body-mb)")
        try:
            payload = json.loads(body)
        except UnicodeDecodeError as exc:
            raise RequestError(400, f"the request body is not valid UTF-8 (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise RequestError(400, f"the request body is not valid JSON ({exc.msg} at line {exc.lineno} column "
                                    f"{exc.colno})") from None
        shape = 'expected a JSON object {"documents": [{"text": "...", "lang": "..."}, ...]}'
        if not isinstance(payload, dict):
            raise RequestError(422, f"{shape}, got a JSON {type(payload).__name__}")
        unknown = sorted(set(payload) - {"documents", "top_k"})
        if unknown:
            raise RequestError(422, f"unknown field(s) {unknown}; {shape} and optionally \"top_k\"", field=unknown[0])
        docs = payload.get("documents")
        if not isinstance(docs, list):
            raise RequestError(422, f"{shape}; 'documents' is {'missing' if docs is None else type(docs).__name__}",
                               field="documents")
        if not docs:
            raise RequestError(422, "'documents' is empty: send at least one document", field="documents")
        if len(docs) > self.max_batch:
            raise RequestError(413, f"{len(docs)} documents in one request, more than the limit of {self.max_batch} "
                                    "(send smaller batches, or raise gfun serve --max-batch)", field="documents")
        top_k = payload.get("top_k")
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0):
            raise RequestError(422, f"'top_k' must be a non-negative integer or null, got {top_k!r}", field="top_k")
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
            rec = dict(doc)
            if rec.get("id") is None:
                rec["id"] = str(i)
            rec["__line__"] = i + 1  # what the corpus and the language detector call the document's line
            records.append(rec)
        return records, top_k

    def predict(self, records: list[dict[str, Any]], top_k: int | None = None) -> dict[str, Any]:
        """Label the documents (records as :meth:`parse` returns them); :class:`RequestError` for an invalid one."""
        from gfun.corpus.multilingual import MultilingualCorpus
        from gfun.errors import CorpusFormatError, LanguageDetectionError, UnseenLanguageError
        from gfun.predictions import prediction_records
        from gfun.text.langid import fill_missing_languages

        t0 = time.perf_counter()
        languages = list(getattr(self.model, "languages_", []))
        with self._lock:
            detected = [_missing(r.get("lang")) for r in records]
            try:
                if any(detected):
                    records = fill_missing_languages(records, spellings=languages)
                docs = MultilingualCorpus.from_records(records, list(self.model.classes_), on_unknown_label="ignore",
                                                       on_missing_labels="negative")
            except ImportError as exc:
                raise RequestError(422, f"a document has no 'lang' and language detection is not available: {exc}",
                                   index=detected.index(True), field="lang") from None
            except CorpusFormatError as exc:  # LanguageDetectionError included
                index = exc.index if isinstance(exc, LanguageDetectionError) else (
                    None if exc.line is None else exc.line - 1)
                where = _where(index, exc.field)
                raise RequestError(422, f"{where}: {exc.reason}" if where else exc.reason, index=index,
                                   field=exc.field) from None
            try:
                out = prediction_records(self.model, docs)
            except UnseenLanguageError as exc:
                index = next((i for i, lang in enumerate(docs.langs) if lang in exc.languages), None)
                lang = docs.langs[index] if index is not None else None
                head = f"document {index} (lang {lang!r})" if index is not None else "a document"
                raise RequestError(422, f"{head}: {exc}", index=index, field="lang") from None
            self.n_requests += 1
            self.n_documents += len(docs)
        for rec, was_detected in zip(out, detected, strict=True):
            rec["lang_detected"] = was_detected
            rec["views"] = self.views_covering(rec["lang"])
            if "probabilities" in rec:
                ranked = sorted(rec["probabilities"].items(), key=lambda kv: -kv[1])
                rec["probabilities"] = dict(ranked if top_k is None else ranked[:top_k])
        return {"predictions": out, "seconds": round(time.perf_counter() - t0, 4)}


def _missing(value: Any) -> bool:
    return value is None or not str(value).strip()


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

    class Error(BaseModel):
        detail: str
        index: int | None = Field(None, description="position of the document the error is about")
        field: str | None = None

    return {"PredictRequest": PredictRequest, "PredictResponse": PredictResponse, "Error": Error}


def create_app(service: ModelService) -> Any:
    """The ASGI application (FastAPI) serving ``service``."""
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
        limit = service.max_body_bytes
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            raise RequestError(413, f"the request body has {length} bytes, more than the limit of {limit} "
                                    "(gfun serve --max-body-mb)")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise RequestError(413, f"the request body is larger than the limit of {limit} bytes "
                                        "(gfun serve --max-body-mb)")
            chunks.append(chunk)
        records, top_k = service.parse(b"".join(chunks))
        return await run_in_threadpool(service.predict, records, top_k)

    predict.__annotations__ = {"request": fastapi.Request, "return": Any}
    app.post("/predict", summary="Label a batch of documents",
             responses={200: {"model": schemas["PredictResponse"]}, 400: error, 413: error, 422: error},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/PredictRequest"}}}}})(predict)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            request_schema = schemas["PredictRequest"].model_json_schema(ref_template="#/components/schemas/{model}")
            components = spec.setdefault("components", {}).setdefault("schemas", {})
            components.update(request_schema.pop("$defs", {}))
            components["PredictRequest"] = request_schema
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi
    return app


def serve(model_dir: str | Path, *, host: str = "127.0.0.1", port: int = 8000, max_batch: int = DEFAULT_MAX_BATCH,
          max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, log_level: str = "info") -> None:
    """Load the model in ``model_dir`` and serve it over HTTP until interrupted (see the module docstring)."""
    from gfun.core.optional import import_optional

    import_optional("fastapi", extra="serve", purpose="gfun serve")
    uvicorn = import_optional("uvicorn", extra="serve", purpose="gfun serve")
    service = ModelService(model_dir, max_batch=max_batch, max_body_bytes=max_body_bytes)
    app = create_app(service)
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
    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1)
