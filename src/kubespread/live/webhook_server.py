"""The admission webhook's HTTPS server: :class:`WebhookServer` serves
``kubespread.live.webhook``'s :class:`AdmissionHandlers` over TLS only (HTTP/1.1 keep-alive,
the handshake in the connection's own thread, a body size limit), and :func:`serve` runs it
until a signal. The admission logic itself, tested without sockets, is in ``webhook``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import socket
import socketserver
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kubespread.live.webhook import HEALTHZ, MAX_BODY_BYTES, AdmissionHandlers

if TYPE_CHECKING:
    from kubespread.live.metrics import Health

__all__ = ["WebhookConfigError", "WebhookServer", "serve", "tls_context"]

#: the same logger as the handlers': one name for the webhook's log
logger = logging.getLogger("kubespread.webhook")


class WebhookConfigError(Exception):
    """The server cannot start as configured (a certificate or key that does not load)."""


def _no_password() -> bytes:
    # an encrypted key would otherwise make OpenSSL prompt on the terminal
    return b""


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A TLS 1.2+ server context; a :class:`WebhookConfigError` naming the file that is wrong."""
    cert, key = Path(cert), Path(key)
    for what, path in (("certificate", cert), ("key", key)):
        if not path.is_file():
            raise WebhookConfigError(f"TLS {what} file {path}: not found")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key, password=_no_password)
    except (ssl.SSLError, OSError) as e:
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=cert)
        except (ssl.SSLError, OSError) as cert_error:
            raise WebhookConfigError(
                f"TLS certificate file {cert}: not a PEM certificate ({cert_error})"
            ) from None
        raise WebhookConfigError(
            f"TLS key file {key}: not an unencrypted PEM private key of certificate {cert} ({e})"
        ) from None
    return context


def _drain(conn: ssl.SSLSocket) -> None:
    """Read and drop what the client is still sending, for a short while, before a close:
    closing a socket with unread data sends a reset, and the client, still writing (a refused
    body, a request after one that was not read), then loses the answer it was sent (a
    lingering close, as web servers do)."""
    deadline = time.monotonic() + DRAIN_SECONDS
    left = DRAIN_BYTES
    with contextlib.suppress(OSError, ValueError):
        while left > 0 and (remaining := deadline - time.monotonic()) > 0:
            conn.settimeout(remaining)
            chunk = conn.recv(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)


#: how long, and how much, a refused body is read and dropped before the connection closes
DRAIN_SECONDS = 1.0
DRAIN_BYTES = 2 * MAX_BODY_BYTES


class _RequestHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive (the API server reuses connections to its webhooks)."""

    protocol_version = "HTTP/1.1"
    server_version = "kubespread-webhook"
    sys_version = ""
    server: WebhookServer
    _watchdog: threading.Timer

    def do_POST(self) -> None:
        self._respond("POST")

    def do_GET(self) -> None:
        self._respond("GET")

    def do_HEAD(self) -> None:
        self._respond("HEAD")

    def do_PUT(self) -> None:
        self._respond("PUT")

    def do_PATCH(self) -> None:
        self._respond("PATCH")

    def do_DELETE(self) -> None:
        self._respond("DELETE")

    def _body(self) -> bytes | str:
        """The body, or why it is not read (the connection is then closed: the rest of the
        request is still on it)."""
        if self.headers.get("Transfer-Encoding", "identity").lower() != "identity":
            return "Transfer-Encoding: not supported, send Content-Length"
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            n = -1
        if n < 0:
            return "Content-Length: not a length"
        if n > MAX_BODY_BYTES:
            return f"body: larger than the limit of {MAX_BODY_BYTES} bytes"
        return self.rfile.read(n)

    def handle_one_request(self) -> None:
        # the socket's timeout bounds each read, not a request: a client sending a byte at a
        # time, each within the timeout, would hold its thread forever (slow loris). The wait
        # for a request and its reading get twice the timeout in all; then the socket is shut.
        watchdog = threading.Timer(2 * self.server.request_timeout, self._cut)
        watchdog.daemon = True
        self._watchdog = watchdog
        watchdog.start()
        try:
            super().handle_one_request()
        finally:
            watchdog.cancel()

    def _cut(self) -> None:
        logger.debug("connection from %s: request not read in time, closed", self.address_string())
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _respond(self, method: str) -> None:
        body = self._body()
        self._watchdog.cancel()  # read in time: the answer takes what it takes
        answer: dict[str, Any] | str
        if isinstance(body, str):
            self.close_connection = True
            status, answer = 400, body
        else:
            status, answer = self.server.handlers.handle(self.path, body, method=method)
        if isinstance(answer, dict):
            payload, content_type = json.dumps(answer).encode(), "application/json"
        else:
            payload, content_type = (answer + "\n").encode(), "text/plain; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if status == 405:
            path = urlsplit(self.path).path
            self.send_header("Allow", "GET, HEAD" if path == HEALTHZ else "POST")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s %s", self.address_string(), format % args)


class WebhookServer(ThreadingHTTPServer):
    """The handlers over HTTPS, one daemon thread per connection.

    The TLS handshake runs in the connection's thread with the socket's timeout set, so a
    plaintext or stalled client costs one thread for at most ``request_timeout`` and never
    blocks the accept loop. ``shutdown()`` may be called from any thread but the one in
    ``serve_forever()``, before or after it started.
    """

    daemon_threads = True
    allow_reuse_address = True
    #: the listen backlog: socketserver's 5 drops connections of a burst (the client retries
    #: its SYN after 1 s, then 3 s), which is what an API server admitting a rollout sends
    request_queue_size = 1024

    def __init__(
        self,
        handlers: AdmissionHandlers,
        *,
        cert: Path,
        key: Path,
        host: str = "0.0.0.0",
        port: int = 9443,
        request_timeout: float = 10.0,
        reuse_port: bool = False,
    ) -> None:
        self.handlers = handlers
        self.request_timeout = request_timeout
        #: SO_REUSEPORT: several processes listen on one port and the kernel spreads the
        #: connections among them (one interpreter lock each: more cores for one pod)
        self.allow_reuse_port = reuse_port
        self.tls = tls_context(cert, key)
        self._state = threading.Lock()
        #: connections accepted (each a TLS handshake), for the log at shutdown
        self.connections = 0
        self._serving = False
        self._closed = False
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), _RequestHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def server_bind(self) -> None:
        # HTTPServer's resolves the host's FQDN, a DNS lookup at start for nothing
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def finish_request(self, request: Any, client_address: Any) -> None:
        self.connections += 1  # one thread each: never two at once on this counter's line
        request.settimeout(self.request_timeout)
        try:
            conn = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        except OSError as e:
            logger.debug("connection from %s closed before TLS: %s", client_address, e)
            return
        try:
            conn.do_handshake()
            super().finish_request(conn, client_address)  # the handler, on the TLS socket
            _drain(conn)
        except (ssl.SSLError, OSError) as e:
            logger.debug("connection from %s: %s", client_address, e)
        finally:
            conn.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # the exception's text may quote a request: its type only, the trace at DEBUG
        logger.error("connection from %s failed: %s", client_address, type(sys.exc_info()[1]).__name__)
        logger.debug("connection from %s failed", client_address, exc_info=True)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        with self._state:
            if self._closed:
                return
            self._serving = True
        super().serve_forever(poll_interval)

    def shutdown(self) -> None:
        """Stop serving and close the listening socket; connections in flight finish on their
        (daemon) threads."""
        with self._state:
            if self._closed:
                return
            self._closed = True
            serving = self._serving
        if serving:
            super().shutdown()
        self.server_close()


def serve(
    handlers: AdmissionHandlers,
    *,
    cert: Path,
    key: Path,
    host: str = "0.0.0.0",
    port: int = 9443,
    request_timeout: float = 10.0,
    stop: threading.Event | None = None,
    reuse_port: bool = False,
    health: Health | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT (handled only when called from the main thread) or until
    ``stop`` is set, then shut down and return. ``health`` learns whether the HTTPS server is
    serving (liveness and readiness) and gets a beat every turn of the wait."""
    server = WebhookServer(
        handlers,
        cert=cert,
        key=key,
        host=host,
        port=port,
        request_timeout=request_timeout,
        reuse_port=reuse_port,
    )
    stop = stop if stop is not None else threading.Event()
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda signum, frame: stop.set())
    thread = threading.Thread(target=server.serve_forever, name="kubespread-webhook", daemon=True)
    if health is not None:

        def serving() -> str | None:
            return None if thread.is_alive() else "the HTTPS server is not serving"

        health.add_liveness("https", serving)
        health.add_readiness("https", serving)
    thread.start()
    logger.info("serving admission reviews on https://%s:%d", host, server.port)
    try:
        while not stop.wait(0.5):
            if health is not None:
                health.beat()
            if not thread.is_alive():
                break
    finally:
        server.shutdown()
        thread.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        lanes = handlers.lanes
        booked = ""
        if lanes is not None:
            booked = (
                f", {lanes.booked} pods booked in {lanes.batches} status writes"
                f" ({lanes.webhook.conflicts} refused with 409 and retried)"
            )
        logger.info("webhook server stopped: %d connections%s", server.connections, booked)
