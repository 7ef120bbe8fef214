"""A client of `outlive serve` in Python, standard library only.

`outlive serve` speaks JSON-RPC 2.0 on its stdin/stdout, one JSON object a
line (MCP's stdio framing; the methods are in docs/reference/wire-protocol.md,
its use in docs/guide/other-languages.md). This module starts it as a child, so the server lives and dies
with its parent, and gives each request an id and each answer back to the
caller that asked; notifications (`completion`, `output`) wait in a queue.

    server = Server(["outlive", "serve", "--storage", storage])
    server.initialize("my-tool")
    server.call("completions/subscribe")
    task = server.call("run", {"shell": "make test"})
    done = server.next_notification("completion", timeout=600)
    server.call("ack", {"id": done["id"]})
    server.close()
"""

import base64
import itertools
import json
import queue
import subprocess
import threading
import time

PROTOCOL_VERSION = "1"

# How long a request waits for its answer unless the caller says otherwise: long enough
# for a server on a loaded machine to open its storage and replay, short enough that a
# server that went silent is reported rather than waited on for ever.
DEFAULT_TIMEOUT_SECONDS = 30.0


class RpcError(Exception):
    """A JSON-RPC error object the server answered with; `data["code"]` is outlive's own (E_NO_TASK, …)."""

    def __init__(self, method, code, message, data=None):
        own = f", {data['code']}" if isinstance(data, dict) and "code" in data else ""
        super().__init__(f"{method}: {message} (JSON-RPC error {code}{own})")
        self.code = code
        self.data = data


class ServerGone(Exception):
    """The server's stdout ended (it exited or was killed) before the answer came."""


class Server:
    """One `outlive serve` child process and the JSON-RPC session on its stdio."""

    def __init__(self, argv, stderr=None):
        self.argv = list(argv)
        self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self._ids = itertools.count(1)
        self._pending = {}
        self._lock = threading.Lock()
        self._gone = False
        self._notifications = queue.Queue()
        # Notifications of other methods seen while waiting for one: kept for the next wait on them.
        self._held = []
        self._reader = threading.Thread(target=self._read, name="outlive-serve-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self):
        return self.process.pid

    def _read(self):
        for raw in self.process.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # not ours to judge: the protocol says every line is JSON; a stray line is skipped
            if isinstance(message, dict) and "method" in message and "id" not in message:
                self._notifications.put(message)
            elif isinstance(message, dict) and "id" in message:
                with self._lock:
                    waiter = self._pending.pop(message["id"], None)
                if waiter is not None:
                    waiter.put(message)
        # EOF: every caller still waiting learns the server is gone instead of timing out.
        with self._lock:
            self._gone = True
            waiters = list(self._pending.values())
            self._pending.clear()
        for waiter in waiters:
            waiter.put(None)
        self._notifications.put(None)

    def _send(self, message):
        line = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            self.process.stdin.write(line)
            self.process.stdin.flush()

    def call(self, method, params=None, timeout=DEFAULT_TIMEOUT_SECONDS):
        """Sends a request and returns its result; raises RpcError for an error answer, ServerGone, or TimeoutError."""
        request_id = next(self._ids)
        waiter = queue.Queue(maxsize=1)
        with self._lock:
            if self._gone:
                raise ServerGone(f"{method}: the server (pid {self.pid}) has exited")
            self._pending[request_id] = waiter
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._send(message)
        except (BrokenPipeError, OSError) as error:
            raise ServerGone(f"{method}: could not write to the server (pid {self.pid}): {error}") from error
        try:
            answer = waiter.get(timeout=timeout)
        except queue.Empty:
            with self._lock:
                self._pending.pop(request_id, None)
            raise TimeoutError(f"{method}: no answer from the server within {timeout} s") from None
        if answer is None:
            raise ServerGone(f"{method}: the server (pid {self.pid}) exited before it answered")
        if "error" in answer:
            error = answer["error"]
            raise RpcError(method, error.get("code"), error.get("message"), error.get("data"))
        return answer.get("result")

    def initialize(self, client_name, client_version="1"):
        """The first request on every connection: agrees on the protocol version and says what replay found."""
        return self.call("initialize", {"protocolVersion": PROTOCOL_VERSION, "clientInfo": {"name": client_name, "version": client_version}})

    def next_notification(self, method, timeout=DEFAULT_TIMEOUT_SECONDS):
        """The params of the next notification of `method`, or None when none came within `timeout` seconds."""
        for i, held in enumerate(self._held):
            if held["method"] == method:
                return self._held.pop(i).get("params")
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                message = self._notifications.get(timeout=left)
            except queue.Empty:
                return None
            if message is None:
                self._notifications.put(None)  # stays at the end for any later wait
                raise ServerGone(f"waiting for {method}: the server (pid {self.pid}) has exited")
            if message["method"] == method:
                return message.get("params")
            self._held.append(message)

    def output(self, task_id, stream="stdout", start=0):
        """A task's whole output from `start` as bytes (the wire carries it as base64: output need not be UTF-8)."""
        data = b""
        while True:
            chunk = self.call("output", {"id": task_id, "stream": stream, "from": start})
            data += base64.b64decode(chunk["data"])
            start = chunk["next"]
            if chunk["done"] or chunk["next"] >= chunk["size"]:
                return data

    def kill(self):
        """SIGKILL, as a crash or an OOM killer would end it: no drain, no goodbye."""
        self.process.kill()
        self.process.wait()
        self._release()

    def close(self, timeout=DEFAULT_TIMEOUT_SECONDS):
        """Closes its stdin (the parent went away) and waits for it to exit; SIGKILL if it does not."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self._release()

    def _release(self):
        """Once the child is gone: the reader reaches EOF, and the pipes are closed rather than left to the collector."""
        self._reader.join(timeout=5)
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass
