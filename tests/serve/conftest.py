"""Fixtures of the `gfun serve` tests: saved models (SIB-200: German, Finnish and English) and a real server."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

LANGS = ["de", "fi", "en"]


@pytest.fixture(scope="session")
def sib(shared_data: Path):
    from gfun.datasets.sib200 import load_sib200

    return load_sib200(shared_data / "sib200", LANGS)


@pytest.fixture(scope="session")
def model_dir(sib, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gFun-X model on SIB-200's German, Finnish and English training sentences (a few seconds)."""
    from gfun.funnelling.generalized import GeneralizedFunnelling

    path = tmp_path_factory.mktemp("serve") / "model"
    GeneralizedFunnelling(views="x", random_state=0, n_jobs=1).fit(sib.train).save(str(path))
    return path


@pytest.fixture(scope="session")
def any_language_model(sib, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """gFun-XP on SIB-200's German, Finnish and English training sentences (a few seconds): ``select`` keeps X,
    and P, whose one vocabulary for all languages serves documents of any language, stays for the others."""
    from gfun.funnelling.generalized import GeneralizedFunnelling

    path = tmp_path_factory.mktemp("serve-xp") / "model"
    # seed 4: X alone validates above X and P (at seed 0 X and P are within one standard error of X, and kept)
    GeneralizedFunnelling(views="xp", random_state=4, n_jobs=1).fit(sib.train).save(str(path))
    return path


@pytest.fixture(scope="module")
def service(model_dir: Path):
    """The model of ``model_dir`` served with small limits (16 documents, 20,000 bytes)."""
    from gfun.serve.service import ModelService

    return ModelService(model_dir, max_batch=16, max_body_bytes=20_000)


@pytest.fixture(scope="module")
def client(service):
    """An in-process client of the app (starlette's TestClient), as a local browser."""
    pytest.importorskip("fastapi", reason="gfun[serve] is not installed")
    pytest.importorskip("httpx", reason="httpx (starlette's TestClient) is not installed")
    from starlette.testclient import TestClient

    from gfun.serve.app import create_app

    return TestClient(create_app(service), base_url="http://localhost")  # Host: localhost, as a local browser


@pytest.fixture(scope="session")
def running_server() -> Callable:
    """``running_server(model, args=(...))``: ``gfun serve`` in a child process on a free port of 127.0.0.1, as a
    context manager yielding its base URL (benchmarks/serve_page.py); the server stops on exit."""
    pytest.importorskip("fastapi", reason="gfun[serve] is not installed")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from serve_page import running_server

    return running_server
