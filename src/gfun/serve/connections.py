"""The connections of ``gfun serve``: uvicorn's h11 protocol with a deadline for request headers and a cap on the
connections open at once (:func:`http_protocol`).

The cap counts connections, busy or idle, and is kept when a connection opens:

- within the cap, a connection is served like any other; its requests are never refused for the cap;
- a connection opening at the cap makes room by closing the connection that has waited longest for a request (idle
  since its opening or its last response, for at least :data:`IDLE_GRACE` seconds): connections held open without
  a request do not lock others out;
- when no connection can be closed (each is in a request, or has just opened or just been answered), the new
  connection is beyond the cap: its request is answered 503 (a JSON error naming ``--max-connections``, then the
  connection is closed), unless room has been made by then or it asks ``GET /health``, which is always answered.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from gfun.errors import RequestError
from gfun.serve.guard import refuse

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_KEEP_ALIVE_TIMEOUT", "DEFAULT_MAX_CONNECTIONS", "IDLE_GRACE",
           "http_protocol"]

logger = logging.getLogger(__name__)

#: Seconds a connection may take to send a request's line and headers (from its opening or the previous response).
DEFAULT_HEADER_TIMEOUT = 10.0
#: Seconds an idle keep-alive connection stays open.
DEFAULT_KEEP_ALIVE_TIMEOUT = 5.0
#: Most connections open at once (see the module docstring for what happens to more).
DEFAULT_MAX_CONNECTIONS = 32
#: Seconds a connection waiting for a request is safe from being closed to make room for a new one: a client
#: that opens a connection and sends its request at once is never cut off by a burst of others.
IDLE_GRACE = 1.0


def http_protocol(header_timeout: float, max_connections: int) -> type:
    """Uvicorn's h11 protocol (the class uvicorn instantiates for each connection), closing a connection whose
    request line and headers take over ``header_timeout`` seconds (from its opening or from the previous response),
    and keeping at most ``max_connections`` connections open as the module docstring describes."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    admitted: dict[Any, None] = {}  # the connections within the cap (a dict: ordered, unlike a set)

    class GuardedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _waiting_since = 0.0  # loop time at which the connection began to wait for a request

        # ------------------------------------------------------------ the deadline for headers
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
                self._close()

        def _close(self) -> None:
            try:
                self.conn.send(h11.ConnectionClosed())
            except h11.LocalProtocolError:
                pass
            self.transport.close()

        # ------------------------------------------------------------ the cap
        def _idle_for(self, now: float) -> float:
            """Seconds this connection has waited for a request; -1 if it is in one (or closing)."""
            in_request = self.cycle is not None and not self.cycle.response_complete
            if in_request or self.conn.their_state is not h11.IDLE or self.transport.is_closing():
                return -1.0
            return now - self._waiting_since

        def _make_room(self) -> bool:
            """Close the admitted connection that has waited longest for a request, if one has waited
            :data:`IDLE_GRACE` seconds; whether one was closed."""
            now = self.loop.time()
            waited, longest = max(((c._idle_for(now), c) for c in admitted), key=lambda pair: pair[0],
                                  default=(-1.0, None))
            if longest is None or waited < IDLE_GRACE:
                return False
            logger.debug("closing a connection idle for %.1f s to make room for a new one", waited)
            del admitted[longest]
            longest._close()
            return True

        def _admit(self) -> bool:
            if self not in admitted and (len(admitted) < max_connections or self._make_room()):
                admitted[self] = None
            return self in admitted

        async def _beyond_the_cap(self, scope: Any, receive: Any, send: Any) -> None:
            """The application of a connection opened beyond the cap: the served one if room has been made since
            (or for ``GET /health``), else a 503."""
            if self._admit():
                self.app = self._served_app
            elif not (scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD")
                      and scope.get("path") == "/health"):
                logger.warning("refused a request: %d connections are open, the limit (--max-connections)",
                               max_connections)
                return await refuse(send, RequestError(
                    503, f"the server has {max_connections} connections open, its limit (gfun serve "
                         "--max-connections), and each is in a request: try again shortly"))
            return await self._served_app(scope, receive, send)

        # ------------------------------------------------------------ uvicorn's protocol
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._waiting_since = self.loop.time()
            self._served_app = self.app
            if not self._admit():
                self.app = self._beyond_the_cap
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._waiting_since = self.loop.time()
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            admitted.pop(self, None)
            super().connection_lost(exc)

    return GuardedH11Protocol
