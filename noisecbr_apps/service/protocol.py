"""uvicorn's HTTP/1.1 protocol with a deadline on each request's head.

uvicorn waits for a request's line and headers as long as the client keeps the connection open:
five clients sending a byte every two seconds held five connections for as long as they liked
(a slowloris). Here a connection whose request head is not complete ``read_timeout`` seconds
after the connection opened (or after the previous answer) is closed, with one line in the log.
The body has its own deadline in the app (:class:`noisecbr_apps.service.app.BodyLimit`), where the
client gets a 408.
"""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["GuardedH11Protocol"]

log = logging.getLogger("noisecbr.serve")


class GuardedH11Protocol(H11Protocol):
    """:class:`H11Protocol` that closes a connection slower than ``read_timeout`` seconds to
    send a request head (the setting ``serve`` hands its workers, else
    :data:`noisecbr_apps.service.app.READ_TIMEOUT`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        from .app import Settings

        self.read_timeout = Settings.from_env().read_timeout
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """A new connection: its first request head has ``read_timeout`` seconds."""
        super().connection_made(transport)
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        """An answer sent: on a kept-alive connection, the next head has its own deadline."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: so is its deadline."""
        self._cancel_head_deadline()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        self._cancel_head_deadline()
        self._head_deadline = self.loop.call_later(self.read_timeout, self._head_too_slow)

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        # Still IDLE: no complete request head since the deadline was set (h11 leaves that
        # state when the head is complete; the body is the app's to time).
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
            log.warning("%s sent no complete request head within %g s: connection closed",
                        client, self.read_timeout)
            self.transport.close()
