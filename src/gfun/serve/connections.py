"""The connections of ``gfun serve``: uvicorn's h11 protocol, closing connections whose request headers are late."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_KEEP_ALIVE_TIMEOUT", "DEFAULT_MAX_CONNECTIONS", "http_protocol"]

logger = logging.getLogger(__name__)

#: Seconds a connection may take to send a request's line and headers (from its opening or the previous response).
DEFAULT_HEADER_TIMEOUT = 10.0
#: Seconds an idle keep-alive connection stays open.
DEFAULT_KEEP_ALIVE_TIMEOUT = 5.0
#: Most connections open at once; requests on connections beyond them are answered 503.
DEFAULT_MAX_CONNECTIONS = 32


def http_protocol(header_timeout: float) -> type:
    """Uvicorn's h11 protocol, closing a connection whose request line and headers take over ``header_timeout``
    seconds (from its opening or from the previous response): slow or absent headers do not hold it open."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

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
                try:
                    self.conn.send(h11.ConnectionClosed())
                except h11.LocalProtocolError:
                    pass
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderTimeoutH11Protocol

