"""`gfun serve`: the HTTP API in process (starlette's TestClient) on a gFun-X model trained on real SIB-200 text."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="gfun[serve] is not installed")
pytest.importorskip("httpx", reason="httpx (starlette's TestClient) is not installed")

from starlette.testclient import TestClient  # noqa: E402

from gfun.cli.main import main  # noqa: E402
from gfun.serve.app import STATIC_FILES, ModelService, create_app  # noqa: E402

LANGS = ["de", "fi", "en"]


@pytest.fixture(scope="module")
def sib(shared_data: Path):
    from gfun.datasets.sib200 import load_sib200

    return load_sib200(shared_data / "sib200", LANGS)


@pytest.fixture(scope="module")
def model_dir(sib, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gFun-X model on SIB-200's German, Finnish and English training sentences (a few seconds)."""
    from gfun.funnelling.generalized import GeneralizedFunnelling

    path = tmp_path_factory.mktemp("serve") / "model"
    GeneralizedFunnelling(views="x", random_state=0, n_jobs=1).fit(sib.train).save(str(path))
    return path


@pytest.fixture(scope="module")
def service(model_dir: Path) -> ModelService:
    return ModelService(model_dir, max_batch=16, max_body_bytes=20_000)


@pytest.fixture(scope="module")
def client(service: ModelService) -> TestClient:
    return TestClient(create_app(service))


def _test_docs(sib, lang: str, n: int) -> list[dict]:
    idx = [i for i, code in enumerate(sib.test.langs) if code == lang][:n]
    return [{"id": sib.test.ids[i], "text": sib.test.texts[i]} for i in idx]


def test_health_and_model_description(client: TestClient, service: ModelService) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["model"] == str(service.model_dir)
    info = client.get("/model").json()
    assert info["classes"] == list(service.model.classes_)
    assert info["languages"] == sorted(LANGS)
    assert info["views"] == [{"letter": "x", "name": "PosteriorsView", "languages": sorted(LANGS)}]
    assert info["selected_views"] == ["x"] and info["probabilities"] is True
    assert info["settings"]["views"] == "x" and info["settings"]["aggregation"] == "select"
    assert info["estimator"] == "GeneralizedFunnelling" and info["saved_by_gfun"] == info["gfun_version"]
    assert info["size_bytes"] > 0 and info["limits"] == {"max_batch": 16, "max_body_bytes": 20_000}


def test_predict_agrees_with_gfun_predict(client: TestClient, service: ModelService, sib, tmp_path: Path) -> None:
    """The same labels and probabilities as `gfun predict` on a file; languages given or detected."""
    docs = _test_docs(sib, "de", 4) + _test_docs(sib, "fi", 4)
    given = [{**d, "lang": "de" if k < 4 else "fi"} for k, d in enumerate(docs)]
    infile, outfile = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    infile.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in given), encoding="utf-8")
    assert main(["predict", "--model", str(service.model_dir), "--input", str(infile), "--output", str(outfile)]) == 0
    expected = [json.loads(line) for line in outfile.read_text(encoding="utf-8").splitlines()]
    assert any(rec["labels"] for rec in expected)
    for body, detected in ((given, False), (docs, True)):
        r = client.post("/predict", json={"documents": body})
        assert r.status_code == 200, r.text
        got = r.json()["predictions"]
        assert [p["lang"] for p in got] == [e["lang"] for e in expected]
        assert all(p["lang_detected"] is detected and p["views"] == ["x"] for p in got)
        for p, e in zip(got, expected, strict=True):
            assert p["id"] == e["id"] and p["labels"] == e["labels"]
            assert p["probabilities"] == pytest.approx(e["probabilities"])
            probs = list(p["probabilities"].values())
            assert probs == sorted(probs, reverse=True)  # most probable first
            assert {c for c, v in p["probabilities"].items() if v > 0.5} == set(p["labels"])


def test_one_pass_prediction_equals_predict_and_predict_proba(service: ModelService, sib) -> None:
    docs = sib.test.subset(range(0, len(sib.test), 7))
    pred, proba = service.model.predict_with_proba(docs)
    assert np.array_equal(pred, service.model.predict(docs)) and pred.any()
    assert np.array_equal(proba, service.model.predict_proba(docs))


def test_top_k_and_default_ids(client: TestClient, sib) -> None:
    doc = _test_docs(sib, "en", 1)[0]
    r = client.post("/predict", json={"documents": [{"text": doc["text"], "lang": "en"}] * 2, "top_k": 2})
    preds = r.json()["predictions"]
    assert [p["id"] for p in preds] == ["0", "1"]  # the position, when no id is given
    full = client.post("/predict", json={"documents": [{"text": doc["text"], "lang": "en"}]}).json()
    assert len(full["predictions"][0]["probabilities"]) == 7
    assert list(preds[0]["probabilities"].items()) == list(full["predictions"][0]["probabilities"].items())[:2]


@pytest.mark.parametrize(("body", "status", "index", "field", "message"), [
    (b"{", 400, None, None, "not valid JSON"),
    (b"[]", 422, None, None, 'expected a JSON object {"documents"'),
    (b'{"docs": []}', 422, None, "docs", "unknown field(s) ['docs']"),
    (b'{"documents": []}', 422, None, "documents", "'documents' is empty"),
    (b'{"documents": [{"text": "Hallo Welt", "lang": "de"}, {"text": 3}]}', 422, 1, "text",
     "document 1, field 'text': expected a string, got int"),
    (b'{"documents": [{"lang": "de"}]}', 422, 0, "text", "document 0, field 'text': missing required field 'text'"),
    (b'{"documents": ["just a string"]}', 422, 0, None, "document 0: expected a JSON object"),
    (b'{"documents": [{"text": "x", "labels": ["a"]}]}', 422, 0, "labels", "unknown field(s) ['labels']"),
    (b'{"documents": [{"text": "Hallo", "lang": "de"}], "top_k": -1}', 422, None, "top_k", "non-negative integer"),
    (b'{"documents": [{"text": "12345 !!!"}]}', 422, 0, "lang", "the text has no letters"),
    (b'{"documents": [{"text": "a", "lang": "de"}, {"text": "Kaunis talo", "lang": "ja"}]}', 422, 1, "lang",
     "document 1 (lang 'ja'): language 'ja' was not seen in training"),
    (b'{"documents": [{"id": "a", "text": "eins", "lang": "de"}, {"id": "a", "text": "zwei", "lang": "de"}]}',
     422, None, "id", "duplicated document id"),
])
def test_refusals_are_json_naming_the_document(client: TestClient, body: bytes, status: int, index: int | None,
                                               field: str | None, message: str) -> None:
    r = client.post("/predict", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()
    assert message in err["detail"]
    assert (err["index"], err["field"]) == (index, field)


def test_limits_of_a_request(client: TestClient) -> None:
    r = client.post("/predict", json={"documents": [{"text": "Hallo Welt", "lang": "de"}] * 17})
    assert r.status_code == 413 and "17 documents in one request, more than the limit of 16" in r.json()["detail"]
    r = client.post("/predict", json={"documents": [{"text": "a" * 30_000, "lang": "de"}]})
    assert r.status_code == 413 and "more than the limit of 20000" in r.json()["detail"]
    # a body announced without Content-Length (chunked) is counted as it arrives
    r = client.post("/predict", content=iter([b'{"documents": [{"text": "', b"a" * 25_000, b'"}]}']))
    assert r.status_code == 413 and "larger than the limit of 20000 bytes" in r.json()["detail"]
    assert client.get("/predict").status_code == 405


def test_concurrent_requests_get_their_own_answers(client: TestClient, service: ModelService, sib) -> None:
    batches = [_test_docs(sib, lang, 3 + k) for k, lang in enumerate(LANGS * 3)]
    expected = [service.predict(service.parse(json.dumps({"documents": b}).encode())[0])["predictions"]
                for b in batches]
    results: dict[int, list] = {}

    def ask(k: int) -> None:
        results[k] = client.post("/predict", json={"documents": batches[k]}).json()["predictions"]

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, want in enumerate(expected):
        assert [(p["id"], p["labels"]) for p in results[k]] == [(p["id"], p["labels"]) for p in want]
        assert np.allclose([list(p["probabilities"].values()) for p in results[k]],
                           [list(p["probabilities"].values()) for p in want])


def test_openapi_and_offline_pages(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]) == {"/health", "/model", "/predict"}
    body = spec["paths"]["/predict"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    schemas = spec["components"]["schemas"]
    assert body == {"$ref": "#/components/schemas/PredictRequest"}
    assert schemas["PredictRequest"]["properties"]["documents"]["items"] == {"$ref": "#/components/schemas/Document"}
    assert {"Document", "PredictResponse", "Error"} <= set(schemas)
    for path, name in (("/", "index.html"), ("/docs", "docs.html"), ("/static/page.js", "page.js")):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith(STATIC_FILES[name])
    assert client.get("/static/../serve.py").status_code == 404
    # nothing is fetched from elsewhere: every URL in the page's files is local
    for name in STATIC_FILES:
        text = client.get(f"/static/{name}").text
        urls = re.findall(r"""(?:src|href|fetch\(|url\()\s*=?\s*["']?([^"')\s]+)""", text)
        assert all(u.startswith("/") and not u.startswith("//") for u in urls), (name, urls)
        assert urls or name == "page.css"
        assert "http://" not in text and "https://" not in text, name


def test_gfun_serve_answers_over_http(model_dir: Path) -> None:
    """The command itself: uvicorn on a free port, the limits given on the command line."""
    import urllib.error
    import urllib.request

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from serve_page import running_server

    def post(url: str, payload: dict) -> tuple[int, dict]:
        req = urllib.request.Request(url + "/predict", data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as exc:
            return exc.code, json.load(exc)

    with running_server(model_dir, args=("--max-batch", "2")) as url:
        status, answer = post(url, {"documents": [{"text": "Das Spiel endete mit einem Sieg der Mannschaft."},
                                                  {"text": "Ottelu päättyi joukkueen voittoon.", "lang": "fi"}]})
        assert status == 200 and [p["lang"] for p in answer["predictions"]] == ["de", "fi"]
        assert answer["predictions"][0]["lang_detected"] and not answer["predictions"][1]["lang_detected"]
        status, answer = post(url, {"documents": [{"text": "eins", "lang": "de"}] * 3})
        assert status == 413 and "more than the limit of 2" in answer["detail"]
        with urllib.request.urlopen(url + "/model", timeout=30) as r:
            assert json.load(r)["limits"]["max_batch"] == 2


def test_serve_without_the_extra_names_it(model_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "fastapi", None)  # as if gfun[serve] were not installed
    assert main(["serve", "--model", str(model_dir), "--port", "1"]) == 1
    err = capsys.readouterr().err
    assert "gfun serve: error:" in err and "pip install 'gfun[serve]'" in err


def test_importing_gfun_does_not_import_the_web_stack() -> None:
    code = ("import sys, gfun, gfun.serve.app, gfun.cli.main; gfun.cli.main.build_parser(); "
            "print(sorted(m for m in ('fastapi', 'starlette', 'uvicorn', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
