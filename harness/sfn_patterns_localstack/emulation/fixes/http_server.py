"""The HTTP server under LocalStack's gateway does no per-request work nobody uses.

LocalStack 4.14.0 serves its gateway through Twisted, as 4.9.2 did: its runtime server
(``localstack.runtime.server.twisted``) wraps the gateway in rolo's ``TwistedGateway``
(``rolo.serving.twisted``; rolo and Twisted are the same releases as under 4.9.2).
Profiled on 4.9.2 with the GIL held (py-spy ``--gil``) on a run of conditional UpdateItems,
about 58 % of LocalStack's CPU was Twisted's reactor thread, and three items of it were
pure waste:

* Twisted parses a POST's form body into ``request.args`` (``parsePOSTFormSubmission``,
  on by default), first parsing its Content-Type with the ``email`` package (a
  ``Message``, a header registry): 7.6 % of the reactor. LocalStack never reads
  ``request.args``; the gateway reads the body through WSGI, from the start.
* Twisted hands every response chunk from the application's thread to the reactor
  and waits for it (``blockingCallFromThread``), then finishes the request with a
  second reactor call: 15 % of the reactor, plus the wait. One chunk that is the whole
  body (nearly every AWS response) now goes with the finish, in one call.
* Twisted writes an access-log line per request (``HTTPFactory.log``), formatted and
  passed to Twisted's logging: 5.7 % of the reactor. Nobody reads it; LocalStack
  logs requests itself (and :mod:`.request_log` quiets that when no log is kept).

``apply()`` turns the form parsing off for every request of the gateway's request
class, sends a one-chunk response with its finish, and, when no log is kept
(``SFNP_REQUEST_LOG=0``, as :mod:`.request_log`), turns the access log off too.
Requests, responses and bodies are unchanged; AWS has nothing of this to emulate.
"""

from __future__ import annotations

import os
from typing import Any

_APPLIED = "_sfnp_lean_http"


def apply() -> bool:
    """Patch rolo's Twisted request and site classes once; whether the form parsing is off."""
    from rolo.serving.twisted import (
        HeaderPreservingWSGIResponse,
        TwistedGateway,
        TwistedRequestAdapter,
    )

    if not getattr(TwistedRequestAdapter.__init__, _APPLIED, False):
        original_init = TwistedRequestAdapter.__init__

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            # Read by twisted.web.http.Request.requestReceived, set by its __init__.
            self._parsePOSTFormSubmission = False

        setattr(__init__, _APPLIED, True)
        TwistedRequestAdapter.__init__ = __init__
    HeaderPreservingWSGIResponse.run = run_wsgi_response
    if os.environ.get("SFNP_REQUEST_LOG", "1") == "0":
        TwistedGateway.log = _no_access_log
    return True


def _no_access_log(self: Any, request: Any) -> None:
    """``HTTPFactory.log`` for a server whose access log nobody keeps."""


def _whole_body(headers: list[tuple[str, str]], chunk: bytes) -> bool:
    """Whether ``chunk`` is the response's whole body (its Content-Length says so)."""
    for name, value in headers:
        if name.lower() == "content-length":
            return value.strip() == str(len(chunk))
    return False


def run_wsgi_response(self: Any) -> None:
    """``_WSGIResponse.run``, with a one-chunk response sent in one reactor call.

    Twisted writes every chunk through ``blockingCallFromThread`` (the application's
    thread wakes the reactor, then waits on a queue for it) and finishes the request
    with one more reactor call. Nearly every AWS response is one chunk whose
    Content-Length is its size: it is written and finished in a single
    ``callFromThread``, and the thread does not wait. A streamed response (no length,
    or more than one chunk) is written as Twisted writes it, chunk by chunk.
    """
    from twisted.python.failure import Failure
    from twisted.web.http import INTERNAL_SERVER_ERROR

    held = None  # a whole body, sent with the finish
    try:
        app_iterator = self.application(self.environ, self.startResponse)
        for elem in app_iterator:
            if elem:
                if held is None and not self.started and _whole_body(self.headers, elem):
                    held = elem
                else:
                    if held is not None:
                        self.write(held)
                        held = None
                    self.write(elem)
            if self._requestFinished:
                break
        close = getattr(app_iterator, "close", None)
        if close is not None:
            close()
    except BaseException:
        import sys

        def wsgi_error(started: bool, type: Any, value: Any, traceback: Any) -> None:
            self._log.failure("WSGI application error", failure=Failure(value, type, traceback))
            if started:
                self.request.loseConnection()
            else:
                self.request.setResponseCode(INTERNAL_SERVER_ERROR)
                self.request.finish()

        self.reactor.callFromThread(wsgi_error, self.started, *sys.exc_info())
    else:

        def wsgi_finish(started: bool, body: bytes | None) -> None:
            if not self._requestFinished:
                if not started:
                    self._sendResponseHeaders()
                if body is not None:
                    self.request.write(body)
                self.request.finish()

        self.reactor.callFromThread(wsgi_finish, self.started, held)
    self.started = True
