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


def _test_docs(sib, lang: str, n: int) -> list[dict]:
    idx = [i for i, code in enumerate(sib.test.langs) if code == lang][:n]
    return [{"id": sib.test.ids[i], "text": sib.test.texts[i]} for i in idx]


def test_health_and_model_description(client: TestClient, service: ModelService) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["model"] == "model"  # the directory's name, never its path
    assert health["created"] == service.manifest["created"]
    info = client.get("/model").json()
    assert info["classes"] == list(service.model.classes_)
    assert info["languages"] == sorted(LANGS)
    assert info["views"] == [{"letter": "x", "name": "PosteriorsView", "languages": sorted(LANGS),
                              "any_language": False, "reach": "training", "serves": "de, en, fi"}]
    assert info["any_language"] is False and info["any_language_views"] == []
    assert info["selected_views"] == ["x"] and info["probabilities"] is True
    assert info["settings"]["views"] == "x" and info["settings"]["aggregation"] == "select"
    assert info["estimator"] == "GeneralizedFunnelling" and info["saved_by_gfun"] == info["gfun_version"]
    assert info["size_bytes"] > 0 and info["limits"] == {"max_batch": 16, "max_body_bytes": 20_000}
    assert info["model"] == "model"
    for text in (client.get("/health").text, client.get("/model").text):
        assert str(service.model_dir.parent) not in text and str(service.model_dir.parent.name) not in text


def test_model_description_says_which_views_serve_any_language(any_language_model: Path, shared_data: Path) -> None:
    """P serves documents of languages without training documents: /model says so, and /predict serves them."""
    client = TestClient(create_app(ModelService(any_language_model)), base_url="http://localhost")
    info = client.get("/model").json()
    assert info["languages"] == sorted(LANGS) and info["selected_views"] == ["x"]
    assert info["any_language"] is True and info["any_language_views"] == ["p"]
    assert [(v["letter"], v["any_language"], v["serves"]) for v in info["views"]] == [
        ("x", False, "de, en, fi"), ("p", True, "any language (trained on de, en, fi)")]
    from gfun.datasets.sib200 import read_sib200_file

    text = read_sib200_file(shared_data / "sib200" / "por_Latn" / "test.tsv", "pt")[0]["text"]
    answer = client.post("/predict", json={"documents": [{"text": text, "lang": "pt"}]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["predictions"][0]["views"] == ["p"]


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


def test_language_detection_prefers_the_model_languages(client: TestClient) -> None:
    """As gfun predict: a short Finnish text is Estonian for the detector over every language (0.42, below its
    0.5, so it was refused), and Finnish among the model's de, fi, en (0.99); a text detected among every language
    as one of the model's keeps what it was detected as."""
    pytest.importorskip("py3langid")
    r = client.post("/predict", json={"documents": [{"text": "Kalle ja Liisa"}, {"text": "Das ist gut"},
                                                    {"text": "Sauna on kuuma", "lang": "en"}]})
    assert r.status_code == 200, r.text
    got = [(p["lang"], p["lang_detected"]) for p in r.json()["predictions"]]
    assert got == [("fi", True), ("de", True), ("en", False)]


def test_a_document_without_lang_and_no_langid_extra_is_refused_by_name(client: TestClient,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What gfun predict says too (one code path): the document, the field and the extra to install."""
    from tests.missing_modules import hide_modules

    hide_modules(monkeypatch, "py3langid")
    r = client.post("/predict", json={"documents": [{"text": "Hallo Welt", "lang": "de"}, {"text": "Hallo Welt"}]})
    assert r.status_code == 422, r.text
    body = r.json()
    assert (body["index"], body["field"]) == (1, "lang")
    assert body["detail"].startswith("document 1, field 'lang': document '1' has no 'lang'")
    assert "pip install 'gfun[langid]'" in body["detail"]


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
    r = client.post("/predict", content=iter([b'{"documents": [{"text": "', b"a" * 25_000, b'"}]}']),
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "larger than the limit of 20000 bytes" in r.json()["detail"]
    assert client.get("/predict").status_code == 405


def test_explain_adds_up_to_the_decisions_and_names_words(client: TestClient, service: ModelService, sib) -> None:
    """POST /explain: for the labels /predict gives, the decision as base + the views' contributions (exactly the
    model's decision values), with the words behind X's; languages detected as /predict detects them."""
    docs = _test_docs(sib, "de", 2) + _test_docs(sib, "fi", 1)
    r = client.post("/explain", json={"documents": [{"id": d["id"], "text": d["text"]} for d in docs],
                                      "top_words": 3})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["views"] == service.model.view_names_ and answer["aggregation"] == "select"
    predicted = client.post("/predict", json={"documents": docs}).json()["predictions"]
    decision = service.model.decision_function([d["text"] for d in docs], langs=["de", "de", "fi"])
    for i, (doc, pred) in enumerate(zip(answer["explanations"], predicted, strict=True)):
        assert (doc["id"], doc["lang"], doc["lang_detected"]) == (pred["id"], pred["lang"], True)
        assert doc["labels"] == pred["labels"]
        assert [lab["label"] for lab in doc["explained"]] == (
            sorted(pred["labels"], key=lambda c: -decision[i, service.model.classes_.index(c)])
            or [service.model.classes_[int(np.argmax(decision[i]))]])
        for lab in doc["explained"]:
            j = service.model.classes_.index(lab["label"])
            assert lab["base_value"] + sum(v["contribution"] for v in lab["views"]) == pytest.approx(
                decision[i, j], abs=1e-8)
            x = lab["views"][0]
            assert x["view"] == "x" and x["word_measure"] == "svm-term" and len(x["words_up"]) <= 3
            assert all(any(w in docs[i]["text"] for w in word["words"]) for word in x["words_up"] + x["words_down"])
    chosen = service.model.classes_[:2]
    r = client.post("/explain", json={"documents": docs[:1], "labels": chosen, "top_words": 0})
    lab = r.json()["explanations"][0]["explained"]
    assert [x["label"] for x in lab] == chosen and not lab[0]["views"][0]["words_up"]


def test_explain_serves_what_only_some_views_serve(any_language_model: Path) -> None:
    """gFun-XP: a French sentence (no French training sentences) is explained by P alone; X gives nothing."""
    client = TestClient(create_app(ModelService(any_language_model)), base_url="http://localhost")
    r = client.post("/explain", json={"documents": [{"text": "Le football est un sport populaire en France.",
                                                     "lang": "fr"}], "top_k": 2})
    assert r.status_code == 200, r.text
    for lab in r.json()["explanations"][0]["explained"]:
        views = {v["view"]: v for v in lab["views"]}
        assert (views["x"]["used"], views["x"]["contribution"], views["x"]["note"]) == (
            False, 0.0, "does not serve 'fr'")
        assert views["p"]["used"] and views["p"]["contribution"] == pytest.approx(
            lab["decision"] - lab["base_value"], abs=1e-9)


@pytest.mark.parametrize(("body", "status", "field", "message"), [
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}] * 17}, 413, "documents",
     "17 documents in one request, more than the limit of 16 for /explain"),
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}], "top_words": 51}, 422, "top_words",
     "'top_words' must be an integer from 0 to 50"),
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}], "top_k": 0}, 422, "top_k", "positive integer"),
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}], "labels": ["no such class"]}, 422, "labels",
     "'labels': 1 unknown class(es), e.g. 'no such class'"),
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}], "labels": "science/technology"}, 422, "labels",
     "'labels' must be a non-empty list of class names"),
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}], "labels": ["health"], "top_k": 1}, 422, "top_k",
     "give 'labels' or 'top_k', not both"),
    ({"documents": [{"text": "Hallo Welt", "lang": "de"}], "top": 1}, 422, "top",
     'unknown field(s) [\'top\']; expected a JSON object {"documents": [{"text": "...", "lang": "..."}, ...]} and '
     'optionally "top_k", "top_words", "labels"'),
    ({"documents": [{"text": "Kaunis talo", "lang": "ja"}]}, 422, "lang", "language 'ja' was not seen in training"),
])
def test_explain_refusals_are_json(client: TestClient, body: dict, status: int, field: str, message: str) -> None:
    r = client.post("/explain", json=body)
    assert r.status_code == status, r.text
    assert message in r.json()["detail"] and r.json()["field"] == field
    assert client.get("/explain").status_code == 405
    r = client.post("/explain", content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415  # JSON only, as every POST


def test_explain_refuses_a_model_without_views() -> None:
    naive = Path(__file__).parents[1] / "persistence" / "fixtures" / "naive"
    client = TestClient(create_app(ModelService(naive)), base_url="http://localhost")
    r = client.post("/explain", json={"documents": [{"text": "ein Paket", "lang": "de"}]})
    assert r.status_code == 422 and "this model (NaiveClassifier) has no views to explain" in r.json()["detail"]


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
    assert set(spec["paths"]) == {"/health", "/model", "/predict", "/explain"}
    body = spec["paths"]["/predict"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    schemas = spec["components"]["schemas"]
    assert body == {"$ref": "#/components/schemas/PredictRequest"}
    assert schemas["PredictRequest"]["properties"]["documents"]["items"] == {"$ref": "#/components/schemas/Document"}
    assert {"Document", "PredictResponse", "Error", "ExplainRequest", "ExplainResponse"} <= set(schemas)
    assert spec["paths"]["/explain"]["post"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ExplainRequest"}
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


@pytest.mark.parametrize(("args", "message"), [
    (("--max-body-mb", "inf"), "argument --max-body-mb: must be a positive number below 1e300, got 'inf'"),
    (("--max-body-mb", "nan"), "argument --max-body-mb: must be a positive number below 1e300, got 'nan'"),
    (("--max-body-mb", "1e308"), "argument --max-body-mb: must be a positive number below 1e300, got '1e308'"),
    (("--max-body-mb", "0"), "argument --max-body-mb: must be a positive number below 1e300, got '0'"),
    (("--port", "70000"), "argument --port: must be an integer from 1 to 65535, got '70000'"),
    (("--port", "-1"), "argument --port: must be an integer from 1 to 65535, got '-1'"),
    (("--max-connections", "0"), "argument --max-connections: must be a positive integer, got '0'"),
    (("--max-batch", "-3"), "argument --max-batch: must be a positive integer, got '-3'"),
    (("--header-timeout", "inf"), "argument --header-timeout: must be a positive number below 1e300, got 'inf'"),
    (("--body-timeout", "-1"), "argument --body-timeout: must be a positive number below 1e300, got '-1'"),
    (("--keep-alive-timeout", "x"), "argument --keep-alive-timeout: must be a positive number below 1e300, got 'x'"),
])
def test_serve_options_out_of_range_are_usage_errors_naming_them(model_dir: Path, capsys: pytest.CaptureFixture,
                                                                 args: tuple[str, ...], message: str) -> None:
    """Before anything runs: the usage and one line naming the option, never a traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--model", str(model_dir), *args])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err
    assert err.splitlines()[-1] == f"gfun serve: error: {message}"


def test_serve_refuses_a_port_out_of_range(model_dir: Path) -> None:
    from gfun.serve.app import serve

    for port in (70000, -1, 8000.5, True):
        with pytest.raises(ValueError, match="port must be an integer from 0 to 65535"):
            serve(model_dir, port=port)


def test_importing_gfun_does_not_import_the_web_stack() -> None:
    code = ("import sys, gfun, gfun.serve.app, gfun.cli.main; gfun.cli.main.build_parser(); "
            "print(sorted(m for m in ('fastapi', 'starlette', 'uvicorn', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------------------------------------- hardening
def test_bodies_slow_to_check_do_not_hold_up_other_requests(model_dir: Path, running_server) -> None:
    """A real server: while bodies built to be slow to check arrive (17 brackets, then a string of escaped quotes
    never closed, of 60 KB and of 6 MiB; 300 documents in 4 MiB), /health keeps answering within a second, and each
    body is refused with a 4xx naming why."""
    import time

    from tests.serve.raw_http import ask

    bodies = [b"[" * 17 + b'"' + b'\\"' * 30_000, b"[" * 17 + b'"' + b'\\"' * (3 * 2**20),
              json.dumps({"documents": [{"text": "Hallo Welt " * 1300, "lang": "de"}] * 300}).encode()]
    answers: list[tuple[int, dict, float]] = []

    def attack(port: int) -> None:
        for body in bodies:
            answers.append(ask(port, "POST", "/predict", body, timeout=60))

    with running_server(model_dir) as url:
        port = int(url.rsplit(":", 1)[1])
        attacker = threading.Thread(target=attack, args=(port,), daemon=True)
        attacker.start()
        health = []
        deadline = time.monotonic() + 60
        while attacker.is_alive() and time.monotonic() < deadline:
            health.append(ask(port, "GET", "/health", timeout=5))
            time.sleep(0.05)
        attacker.join(timeout=60)
    assert [(status, "nested more than 16 deep" in a.get("detail", "")) for status, a, _ in answers] == [
        (400, True), (400, True), (413, False)], answers
    assert "300 documents in one request" in answers[2][1]["detail"]
    assert len(health) >= 3 and all(status == 200 for status, _, _ in health), health
    slowest = max(seconds for _, _, seconds in health)
    assert slowest < 1.0, f"/health took {slowest:.2f} s while the bodies were checked"


def test_a_model_retrained_under_the_server_is_not_picked_up(service: ModelService, sib, tmp_path: Path) -> None:
    """The documented answer: the server keeps serving the version it loaded, whole; a restart serves the new one."""
    from gfun.funnelling.generalized import GeneralizedFunnelling

    path = tmp_path / "model"
    service.model.save(str(path))
    running = ModelService(path)
    client = TestClient(create_app(running), base_url="http://localhost")
    doc = {"documents": [{"text": _test_docs(sib, "de", 1)[0]["text"], "lang": "de"}]}
    before = client.post("/predict", json=doc).json()["predictions"]
    health = client.get("/health").json()
    GeneralizedFunnelling(views="x", random_state=1, n_jobs=1).fit(
        sib.train.subset([i for i, lang in enumerate(sib.train.langs) if lang != "en"])).save(str(path))
    assert ModelService(path).info()["languages"] == ["de", "fi"]  # what a restarted server would serve
    assert client.get("/model").json()["languages"] == sorted(LANGS)  # the running one: the version it loaded
    assert client.get("/health").json()["created"] == health["created"]
    assert client.post("/predict", json=doc).json()["predictions"] == before
    assert client.post("/predict", json={"documents": [{"text": "Hello", "lang": "en"}]}).status_code == 200


# ---------------------------------------------------------------------------------------------- fuzz
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=20))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                             max_size=4), max_leaves=12)
_LANG = st.sampled_from(["de", "fi", "en", "ja", "", " DE ", "xx-yy"]) | _JSON
_DOC = st.fixed_dictionaries({}, optional={"text": st.text(max_size=60) | _JSON, "lang": _LANG, "id": _JSON,
                                           "labels": _JSON})
_PAYLOAD = st.fixed_dictionaries({"documents": st.lists(_DOC, max_size=4) | _JSON},
                                 optional={"top_k": st.integers(-3, 12) | _JSON, "x": _JSON}) | _JSON
_TRICKS = st.sampled_from([b"9" * 5000, b"[" * 3000, b'"\\ud800"', b"1e999", b"NaN", b"-Infinity", b'"\\udc00x"',
                           b'{"\\ud800": 1}', b'"\\u0000"', b'"\\ud83d\\ude00"', b"-0", b"{" * 40, b'{"a":' * 30,
                           b"\xff\xfe", b"\xef\xbb\xbf", b"\x00", b"1" * 64,
                           b"0.0000000000000000000000000000000000000000001e-400"])


@st.composite
def _bodies(draw: st.DrawFn) -> bytes:
    # hypothesis draws the first elements of a list most: the troublesome first
    kind = draw(st.sampled_from(["nested", "valued", "plausible", "spliced", "json", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "nested":
        n = draw(st.sampled_from([3000, 17, 1001, 15000, 16, 999, 1000, 100, 1, 2, 3, 15]))
        return draw(st.sampled_from([b"[", b"{", b'{"documents":', b'[{"a":'])) * n + draw(
            st.sampled_from([b"]" * n, b"", b"}" * n]))
    if kind == "valued":  # a token of trouble as a value
        return (b'{"documents": [{"text": "Hallo Welt", "lang": "de", "id": ' + draw(_TRICKS) + b'}], "top_k": '
                + draw(_TRICKS) + b"}")
    if kind == "plausible":
        docs = draw(st.lists(st.fixed_dictionaries({"text": st.text(max_size=60)}, optional={
            "lang": st.sampled_from(["de", "fi", "en", "ja", None, ""]), "id": st.integers() | st.text(max_size=5)}),
            min_size=1, max_size=4))
        return json.dumps({"documents": docs, "top_k": draw(st.none() | st.integers(-1, 8))},
                          ensure_ascii=draw(st.booleans())).encode()
    body = json.dumps(draw(_PAYLOAD), ensure_ascii=draw(st.booleans())).encode()
    if kind == "spliced":  # a token of trouble put somewhere into valid JSON
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(_TRICKS) + body[at + draw(st.integers(0, 3)):]
    return body


def _mostly(good: list, bad: list) -> st.SearchStrategy:
    """Three times in four one of ``good``, else one of ``bad`` or printable text."""
    return st.integers(0, 3).flatmap(lambda k: st.sampled_from(good) if k else st.one_of(st.sampled_from(bad),
                                                                                         _PRINTABLE))


_PRINTABLE = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
_CONTENT_TYPES = _mostly(["application/json", "application/json; charset=utf-8", "APPLICATION/JSON"],
                         [None, "application/json; charset=utf-16", "text/plain", "text/plain; charset=utf-8",
                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=b", "",
                          "application/json;;charset", "application/json, text/plain"])
_HOSTS = _mostly(["localhost", "localhost:8000", "127.0.0.1:1", "[::1]:8000"],
                 ["evil.example", "", "[::1", "::1", "localhost:", "LocalHost", "127.0.0.1.evil.example"])
_ROUTES = _mostly([("POST", "/predict")], [(m, p) for m in ("GET", "PUT", "OPTIONS", "DELETE", "HEAD", "POST")
                                               for p in ("/predict", "/explain", "/health", "/model", "/", "/nope",
                                                                  "/docs")])
_HEADER_NAMES = st.sampled_from(["Origin", "Accept", "Expect", "Cookie", "X-Forwarded-Host", "Accept-Encoding",
                                 "Content-Encoding", "Range", "X-Anything"])


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(route=_ROUTES.filter(lambda r: isinstance(r, tuple)), body=_bodies(), content_type=_CONTENT_TYPES,
       host=_HOSTS, extra=st.dictionaries(_HEADER_NAMES, _PRINTABLE, max_size=3))
def test_fuzz_requests_never_get_a_5xx(client: TestClient, route: tuple[str, str], body: bytes,
                                       content_type: str | None, host: str, extra: dict[str, str]) -> None:
    """Random bodies, content types, nesting, numbers, hosts and headers: always an answer below 500 (the test
    client raises the server's exceptions), and every refusal of /predict is JSON with a detail."""
    method, path = route
    headers = {**extra, "Host": host}
    if content_type is not None:
        headers["Content-Type"] = content_type
    r = client.request(method, path, content=body, headers=headers)
    assert r.status_code < 500, (r.status_code, r.text[:300])
    if route == ("POST", "/predict") and r.status_code >= 400:
        assert isinstance(r.json()["detail"], str)


@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.data_too_large])
@given(body=_bodies())
def test_fuzz_parser_refuses_with_a_request_error_only(service: ModelService, body: bytes) -> None:
    from gfun.errors import RequestError

    try:
        records, top_k = service.parse(body)
    except RequestError as exc:
        assert 400 <= exc.status < 500 and exc.message
    else:
        assert records and all(isinstance(r["text"], str) for r in records)
        assert top_k is None or (isinstance(top_k, int) and top_k >= 0)
