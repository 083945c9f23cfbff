"""The request guard of `gfun serve`: the Host header, JSON bodies only, the size and time of a body."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi", reason="gfun[serve] is not installed")
pytest.importorskip("httpx", reason="httpx (starlette's TestClient) is not installed")

from starlette.testclient import TestClient  # noqa: E402

from gfun.serve.app import create_app  # noqa: E402
from gfun.serve.guard import RequestGuard, allowed_host_names  # noqa: E402
from gfun.serve.service import ModelService  # noqa: E402


@pytest.mark.parametrize("content_type", [None, "text/plain", "text/plain; charset=utf-8",
                                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                          "application/json; charset=latin-1", "application/jsonx", "text/json"])
def test_json_bodies_only(client: TestClient, content_type: str | None) -> None:
    """A body a page on another origin can send without a preflight (text/plain, form encodings) is refused."""
    body = json.dumps({"documents": [{"text": "Hallo Welt", "lang": "de"}]}).encode()
    headers = {} if content_type is None else {"Content-Type": content_type}
    r = client.post("/predict", content=body, headers=headers)
    assert r.status_code == 415 and "Content-Type: application/json" in r.json()["detail"]
    assert r.headers["connection"] == "close"
    ok = client.post("/predict", content=body, headers={"Content-Type": "Application/JSON; charset=UTF-8"})
    assert ok.status_code == 200, ok.text


def test_host_header_is_checked(service: ModelService) -> None:
    """Against DNS rebinding: only local names and the bound host by default, more with --allow-host."""
    local = TestClient(create_app(service), base_url="http://localhost")
    for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST"):
        assert local.get("/health", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io", "[::1",
                 "localhost:x", "", "0.0.0.0"):
        for r in (local.get("/model", headers={"Host": host}),
                  local.post("/predict", json={"documents": [{"text": "a", "lang": "de"}]}, headers={"Host": host})):
            assert r.status_code == 400 and "Host" in r.json()["detail"], (host, r.text)
    named = TestClient(create_app(service, allowed_hosts=allowed_host_names("10.1.2.3", ["gfun.example"])))
    for host, status in (("gfun.example:80", 200), ("10.1.2.3:8000", 200), ("localhost", 200), ("evil.example", 400)):
        assert named.get("/health", headers={"Host": host}).status_code == status, host
    assert TestClient(create_app(service, allowed_hosts=None)).get("/health").status_code == 200  # --allow-host '*'
    assert allowed_host_names("0.0.0.0") == {"localhost", "127.0.0.1", "::1"}


def _guarded(headers: dict[str, str], chunks: list[tuple[float, bytes]]) -> tuple[int, dict, list[bytes]]:
    """One POST /predict through a :class:`RequestGuard` (100 bytes, 0.3 s), its body arriving as (delay, bytes)
    chunks: the status, the JSON answer and the bodies the application behind the guard received."""
    import asyncio

    received, sent = [], []

    async def app(scope, receive, send) -> None:
        received.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict:
        delay, data = chunks.pop(0)
        await asyncio.sleep(delay)
        return {"type": "http.request", "body": data, "more_body": bool(chunks)}

    async def send(message: dict) -> None:
        sent.append(message)

    guard = RequestGuard(app, allowed_hosts=frozenset({"localhost"}), max_body_bytes=100, body_timeout=0.3)
    scope = {"type": "http", "method": "POST", "path": "/predict",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], json.loads(sent[1]["body"]), received


def test_body_timeout_and_size_are_enforced_before_the_app() -> None:
    headers = {"Host": "localhost", "Content-Type": "application/json"}
    status, answer, received = _guarded(headers, [(0.0, b'{"doc'), (0.1, b'uments": '), (0.5, b"[]}")])
    assert (status, received) == (408, []) and "within 0.3 s" in answer["detail"]
    status, answer, received = _guarded({**headers, "Content-Length": "101"}, [(0.0, b"x" * 101)])
    assert (status, received) == (413, []) and "101 bytes" in answer["detail"]
    status, answer, received = _guarded(headers, [(0.0, b"x" * 60), (0.0, b"x" * 60)])  # chunked, no length
    assert (status, received) == (413, []) and "larger than the limit of 100 bytes" in answer["detail"]
    status, answer, received = _guarded(headers, [(0.0, b'{"a"'), (0.1, b": 1}"), (0.1, b"")])
    assert (status, received) == (200, [b'{"a": 1}'])  # in time and small enough: the app gets the body whole
