"""The checks every request of ``gfun serve`` passes before the application sees it (:class:`RequestGuard`): the
``Host`` header (against DNS rebinding), a JSON ``Content-Type`` for a ``POST``, the size of the body and the time
it takes to arrive.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from gfun.errors import RequestError

__all__ = ["DEFAULT_BODY_TIMEOUT", "LOCAL_HOSTS", "RequestGuard", "allowed_host_names", "refuse"]

#: Seconds a request's body may take to arrive whole, counted from the end of its headers (later: 408).
DEFAULT_BODY_TIMEOUT = 30.0
#: Host names always accepted in the ``Host`` header (besides the address the server is bound to).
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


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
            return await refuse(send, exc)
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


async def refuse(send: Any, exc: RequestError) -> None:
    """Answer with ``exc`` as a JSON error and close the connection."""
    body = json.dumps(exc.payload()).encode()
    await send({"type": "http.response.start", "status": exc.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})

