"""The one way the fake HTTP services run: a real uvicorn server on a free loopback port, in a
thread, for the length of a ``with`` block (so clients exercise their whole HTTP path)."""

from __future__ import annotations

import threading
import time
from typing import Any, Self


class Served:
    """Base of the fakes: ``serve(app)`` in ``__init__``, then ``with fake:`` starts and stops
    it. ``_closing`` turns true on exit, so slow replies can stop waiting."""

    what = "fake server"

    def serve(self, app: Any, host: str = "127.0.0.1") -> None:
        import uvicorn

        config = uvicorn.Config(
            app,
            host=host,
            port=0,
            log_level="critical",
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0
        self._closing = False

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 60  # a bound against a hang (slow on a busy machine)
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the {self.what} did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing = True
        self.server.should_exit = True
        self.thread.join(timeout=10)
