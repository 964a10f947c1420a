"""Serve state files to Terraform's ``http`` backend from this process.

Why: with the ``local`` backend, Terraform rewrites the whole state file (indented JSON,
after comparing it with the last one written) after every resource change it makes,
so an apply or destroy costs CPU quadratic in the size of the state: about a third of
Terraform's CPU for a 230-resource example (500 KB of state). Terraform's remote-state
backends keep the snapshot in memory instead and send it at the end of the command
(and every 20 seconds during a long one). The ``http`` backend is the cheapest of them
(one GET, a few POSTs; no SDK, no credentials), and this module is its server: each
state is still one ordinary file in the workspace's scratch directory, written whole
and atomically on every POST, so reading it back (:meth:`Workspace.state`, the
leftover check) stays a file read.

The server runs in a daemon thread of the process that runs Terraform (the harness
waits on ``terraform`` in a subprocess, so the thread is free to answer it). It listens
on 127.0.0.1 only and serves only the files registered with :func:`address_for`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PREFIX = "/state/"


class _Registry:
    """The state files this process serves, by an opaque key derived from the path."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paths: dict[str, Path] = {}
        self.server: ThreadingHTTPServer | None = None

    def key_for(self, path: Path) -> str:
        key = hashlib.sha256(str(path).encode()).hexdigest()[:32]
        with self.lock:
            self.paths[key] = path
        return key

    def path(self, request_path: str) -> Path | None:
        if not request_path.startswith(PREFIX):
            return None
        with self.lock:
            return self.paths.get(request_path[len(PREFIX) :].split("?", 1)[0])

    def port(self) -> int:
        with self.lock:
            if self.server is None:
                server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
                server.daemon_threads = True
                threading.Thread(
                    target=server.serve_forever, name="terraform-state-server", daemon=True
                ).start()
                self.server = server
            return self.server.server_address[1]


_REGISTRY = _Registry()


class _Handler(BaseHTTPRequestHandler):
    """GET reads a state file, POST replaces it, DELETE removes it (the http backend's API)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: Terraform's own output says what it did."""

    def _reply(self, status: HTTPStatus, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if body:
            self.send_header("Content-Type", "application/json")
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_GET(self) -> None:
        """The state, or 404 before the first write (Terraform: no state yet)."""
        path = _REGISTRY.path(self.path)
        if path is None or not path.is_file():
            self._reply(HTTPStatus.NOT_FOUND)
            return
        self._reply(HTTPStatus.OK, path.read_bytes())

    def do_POST(self) -> None:
        """Replace the state file with the body, atomically (a reader never sees half)."""
        path = _REGISTRY.path(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path is None:
            self._reply(HTTPStatus.NOT_FOUND)
            return
        partial = path.with_name(f".{path.name}.{threading.get_ident()}.partial")
        partial.write_bytes(body)
        os.replace(partial, path)
        self._reply(HTTPStatus.OK)

    def do_DELETE(self) -> None:
        """Remove the state file (``terraform workspace delete`` and the like)."""
        path = _REGISTRY.path(self.path)
        if path is None:
            self._reply(HTTPStatus.NOT_FOUND)
            return
        path.unlink(missing_ok=True)
        self._reply(HTTPStatus.OK)


def address_for(state_path: Path) -> str:
    """The URL at which Terraform's ``http`` backend reads and writes ``state_path``.

    Starts this process's server on first use. The URL is valid while this process
    runs; the file outlives it.
    """
    path = Path(state_path).resolve()
    key = _REGISTRY.key_for(path)
    return f"http://127.0.0.1:{_REGISTRY.port()}{PREFIX}{key}"
