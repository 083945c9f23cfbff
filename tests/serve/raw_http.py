"""HTTP/1.1 spoken over plain sockets to a `gfun serve` on 127.0.0.1: what the attack tests need and an HTTP library
hides (idle connections held open, bodies sent as given, the time each answer takes)."""

from __future__ import annotations

import json
import socket
import time


def connect(port: int, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def request_bytes(method: str, path: str, body: bytes = b"", *, close: bool = True) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if body or method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    if close:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + body


def read_response(s: socket.socket) -> tuple[int, dict, bytes]:
    """One response read from ``s``: its status, headers (lower-case names) and body (by its Content-Length, or up
    to the end of the connection); status 0 when the connection ends first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return 0, {}, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if "content-length" in headers:
        while len(body) < int(headers["content-length"]):
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    else:
        while chunk := s.recv(65536):
            body += chunk
    return int(lines[0].split()[1]), headers, body


def ask(port: int, method: str, path: str, body: bytes = b"", *, timeout: float = 10.0) -> tuple[int, dict, float]:
    """One request on a new connection: the status, the JSON answer ({} if none) and the seconds it took."""
    t0 = time.monotonic()
    with connect(port, timeout) as s:
        s.sendall(request_bytes(method, path, body))
        status, _, answer = read_response(s)
    try:
        payload = json.loads(answer) if answer else {}
    except ValueError:
        payload = {"raw": answer[:200].decode("latin-1")}
    return status, payload, time.monotonic() - t0
