"""`gfun serve`'s connections, against a real server (uvicorn on 127.0.0.1, in a child process): late headers and
bodies, the cap on connections and what happens beyond it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.serve.raw_http import ask, connect, read_response, request_bytes

pytest.importorskip("fastapi", reason="gfun[serve] is not installed")

PREDICT = json.dumps({"documents": [{"text": "Das Spiel endete mit einem Sieg.", "lang": "de"}]}).encode()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _until_closed(s) -> bytes:
    """What the server sends until it closes the connection (bounded by the socket's timeout)."""
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def test_slow_connections_are_closed_and_busy_ones_capped(model_dir: Path, running_server) -> None:
    """Short limits: silent and slow-header connections are closed after --header-timeout, stalled uploads get 408
    after --body-timeout, and while every connection within --max-connections is in a request, a request on one
    beyond gets 503 (JSON, naming the option)."""
    request = request_bytes("POST", "/predict", PREDICT)
    args = ("--header-timeout", "1", "--body-timeout", "1.5", "--max-connections", "2", "--keep-alive-timeout", "1")
    with running_server(model_dir, args=args) as url:
        port = _port(url)
        silent, slow = connect(port), connect(port)
        slow.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the rest of the headers never comes
        t0 = time.monotonic()
        assert _until_closed(silent) == b"" and _until_closed(slow) == b""  # closed, not kept open
        assert 0.5 < time.monotonic() - t0 < 5
        stalled = [connect(port) for _ in range(2)]
        for s in stalled:
            s.sendall(request[:-len(PREDICT) + 10])  # headers whole, the body stalls
        time.sleep(0.3)
        extra = connect(port)
        extra.sendall(request)
        status, headers, body = read_response(extra)
        assert status == 503 and headers["connection"] == "close", (status, body)
        assert "--max-connections" in json.loads(body)["detail"]
        t0 = time.monotonic()
        for s in stalled:
            got = _until_closed(s)
            assert got.startswith(b"HTTP/1.1 408") and b"--body-timeout" in got, got
        assert time.monotonic() - t0 < 5
        for s in [silent, slow, *stalled, extra]:
            s.close()
        status, answer, _ = ask(port, "POST", "/predict", PREDICT)  # the connections are freed: served again
        assert status == 200 and answer["predictions"][0]["labels"] is not None, answer


def test_idle_connections_beyond_the_cap_do_not_lock_others_out(model_dir: Path, running_server) -> None:
    """Idle connections held open, many more than --max-connections: /health still answers within a second on a
    new connection, as does /predict, the oldest idle connections being closed to make room."""
    args = ("--max-connections", "4", "--header-timeout", "30", "--keep-alive-timeout", "30")
    with running_server(model_dir, args=args) as url:
        port = _port(url)
        idle = [connect(port) for _ in range(12)]
        try:
            time.sleep(1.5)  # idle longer than a connection's grace (gfun.serve.connections.IDLE_GRACE)
            for _ in range(3):
                status, answer, seconds = ask(port, "GET", "/health")
                assert (status, answer.get("status")) == (200, "ok") and seconds < 1.0, (status, answer, seconds)
            status, answer, _ = ask(port, "POST", "/predict", PREDICT)
            assert status == 200 and answer["predictions"][0]["lang"] == "de", answer
        finally:
            for s in idle:
                s.close()


def test_requests_within_the_cap_are_never_refused(model_dir: Path, running_server) -> None:
    """--max-connections 4, 4 connections open then 3 more: the 4 within the cap are served (not 503), and a
    connection beyond it is still answered on /health."""
    args = ("--max-connections", "4", "--header-timeout", "30", "--keep-alive-timeout", "30")
    with running_server(model_dir, args=args) as url:
        port = _port(url)
        within = [connect(port) for _ in range(4)]
        time.sleep(0.2)  # accepted in this order
        beyond = [connect(port) for _ in range(3)]
        try:
            time.sleep(0.2)
            for s in within:
                s.sendall(request_bytes("POST", "/predict", PREDICT, close=False))
            for s in within:
                status, _, body = read_response(s)
                assert status == 200 and b'"labels"' in body, (status, body[:200])
            t0 = time.monotonic()
            beyond[0].sendall(request_bytes("GET", "/health"))
            status, _, body = read_response(beyond[0])
            assert status == 200 and json.loads(body)["status"] == "ok"
            assert time.monotonic() - t0 < 1.0
        finally:
            for s in within + beyond:
                s.close()
