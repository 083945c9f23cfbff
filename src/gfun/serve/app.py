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
    optional; at most :data:`~gfun.serve.service.MAX_EXPLAIN_BATCH` documents) -> ``{"explanations": [{"id",
    "lang", "lang_detected", "labels", "explained": [{"label", "predicted", "decision", "base_value", "probability",
    "views": [{"view", "contribution", "used", "note", "posterior", "word_measure", "words_up", "words_down",
    ...}]}]}], "aggregation", "views"}``: for each label explained (the predicted ones by default), the decision
    split into a base value and each view's contribution, and the words that pushed the label up or down
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
Before the application sees a request, :class:`~gfun.serve.guard.RequestGuard` refuses, with a JSON error and
``Connection: close``: a ``Host`` header naming another host than the allowed ones (400; against DNS rebinding;
``--allow-host``), a ``POST`` whose ``Content-Type`` is not ``application/json`` (415: the encodings a page on
another origin can send without a preflight are refused), a body over ``max_body_bytes`` (413; ``--max-body-mb``)
and a body that does not arrive whole within ``body_timeout`` seconds of its headers (408; ``--body-timeout``).
:meth:`ModelService.parse <gfun.serve.service.ModelService.parse>` refuses with 400 a body that is not UTF-8 JSON,
JSON nested deeper than :data:`~gfun.serve.json_body.MAX_JSON_DEPTH`, numbers longer than
:data:`~gfun.serve.json_body.MAX_NUMBER_CHARS` characters or not finite, and strings with lone surrogates; the
nesting is measured in one linear pass before decoding, and a body is checked, and its documents labelled, in a
worker thread, so that the event loop stays free to answer other requests (``/health`` runs on it). Uvicorn (its
pure-Python h11 protocol) closes a connection whose request line and headers do not arrive within
``header_timeout`` seconds (``--header-timeout``; idle keep-alive connections after ``keep_alive_timeout``,
``--keep-alive-timeout``) and answers 400 to headers over 16 KiB. At most ``max_connections`` connections are
served at once (``--max-connections``; :mod:`gfun.serve.connections`): a new one at the cap closes the connection
idle the longest, and when every one is busy, its request is answered 503 (``GET /health`` is still answered).
Responses name the model by its directory's name, never its path.

The model is loaded once, at start: a model retrained into the same directory while the server runs is not picked
up (the server keeps answering with the version it loaded, whole and consistent; ``created`` in ``/health`` and
``/model`` says which); restart the server to serve the new version.

The web stack (FastAPI, uvicorn) is the optional extra ``serve``: ``pip install 'gfun[serve]'``.

The parts, each in its own module: :mod:`gfun.serve.service` (the model and the checks of a request's documents),
:mod:`gfun.serve.json_body` (strict JSON), :mod:`gfun.serve.guard` (what every request passes before the
application), :mod:`gfun.serve.connections` (uvicorn's protocol: late headers, the connection cap),
:mod:`gfun.serve.schemas` (the API description); this one holds the routes and :func:`serve`.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from gfun.errors import RequestError
from gfun.serve.connections import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_KEEP_ALIVE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    http_protocol,
)
from gfun.serve.guard import DEFAULT_BODY_TIMEOUT, LOCAL_HOSTS, RequestGuard, allowed_host_names
from gfun.serve.json_body import MAX_JSON_DEPTH, MAX_NUMBER_CHARS
from gfun.serve.schemas import openapi_schemas
from gfun.serve.service import DEFAULT_MAX_BATCH, DEFAULT_MAX_BODY_BYTES, MAX_EXPLAIN_BATCH, MAX_TOP_WORDS, ModelService

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_HEADER_TIMEOUT", "DEFAULT_KEEP_ALIVE_TIMEOUT", "DEFAULT_MAX_BATCH",
           "DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_CONNECTIONS", "LOCAL_HOSTS", "MAX_EXPLAIN_BATCH", "MAX_JSON_DEPTH",
           "MAX_NUMBER_CHARS", "MAX_TOP_WORDS", "STATIC_FILES",
           "ModelService", "RequestError", "RequestGuard", "allowed_host_names", "create_app", "serve", "static_file"]

logger = logging.getLogger(__name__)

#: Request bodies checked at once, each in a worker thread (more wait their turn; few, so that the event loop,
#: which answers ``/health``, does not queue behind many threads for the interpreter).
BODY_CHECK_THREADS = 2
#: Files of the page, served under ``/static/`` (and ``/`` for ``index.html``).
STATIC_FILES = {"index.html": "text/html", "page.js": "text/javascript", "page.css": "text/css",
                "docs.html": "text/html"}


def static_file(name: str) -> bytes:
    """A file of the page (see :data:`STATIC_FILES`), read from the installed package."""
    return resources.files("gfun.serve").joinpath("static", name).read_bytes()




def create_app(service: ModelService, *, allowed_hosts: frozenset[str] | None = frozenset(LOCAL_HOSTS),
               body_timeout: float = DEFAULT_BODY_TIMEOUT) -> Any:
    """The ASGI application (FastAPI) serving ``service``, behind a :class:`RequestGuard` (``allowed_hosts``:
    the names accepted in the ``Host`` header, ``None`` for any; ``body_timeout``: seconds for a body to arrive)."""
    from gfun.core.optional import import_optional

    fastapi = import_optional("fastapi", extra="serve", purpose="gfun serve")
    from anyio import to_thread
    from fastapi.openapi.utils import get_openapi
    from fastapi.responses import JSONResponse, Response

    from gfun import __version__

    schemas = openapi_schemas()
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
    async def health() -> dict[str, Any]:  # on the event loop: never waits for a worker thread
        return service.health()

    @app.get("/model", summary="The served model: classes, languages, views, training settings, versions")
    def model() -> dict[str, Any]:
        return service.info()

    error = {"model": schemas["Error"]}
    checking = threading.BoundedSemaphore(BODY_CHECK_THREADS)  # a thread's, not a loop's: test clients run many

    def check(parse: Any, body: bytes) -> Any:
        with checking:
            return parse(body)

    async def answer(request: Any, parse: Any, work: Any) -> Any:
        """The answer to a POST: its body (read whole, in time and within limits by the guard) checked, the work
        done and the answer encoded, each in a worker thread, so that the event loop stays free for other requests."""
        body = await request.body()
        parsed = await to_thread.run_sync(check, parse, body)
        return await to_thread.run_sync(lambda: JSONResponse(work(*parsed)))

    async def predict(request):  # type: ignore[no-untyped-def]  # annotated below: FastAPI injects the request
        return await answer(request, service.parse, service.predict)

    predict.__annotations__ = {"request": fastapi.Request, "return": Any}
    app.post("/predict", summary="Label a batch of documents",
             responses={200: {"model": schemas["PredictResponse"]}, 400: error, 408: error, 413: error, 415: error,
                        422: error},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                 "schema": {"$ref": "#/components/schemas/PredictRequest"}}}}})(predict)

    async def explain(request):  # type: ignore[no-untyped-def]  # annotated below, as predict
        return await answer(request, service.parse_explain, service.explain)

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
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an integer from 0 to 65535 (0: any free port), got {port!r}")
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
    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1,
                http=http_protocol(header_timeout, int(max_connections)), timeout_keep_alive=keep_alive_timeout)
