# Shared fixtures of the eventkv serve tests: a real `eventkv serve` process
# started from $EVENTKV with the model $EVENTKV_MODEL, and a small client.
import itertools
import os
import pathlib
import re
import signal
import subprocess
import time

import pytest
import requests

KEY = "testkey"
LISTENING = re.compile(r"eventkv serve: listening on (http://\S+)")
REPO = pathlib.Path(__file__).resolve().parents[2]

# The limits the shared server runs with; tests that check them use these.
MAX_BODY = 65536
MAX_EVENT_TOKENS = 512


def pytest_configure(config):
    if not os.environ.get("EVENTKV") or not os.environ.get("EVENTKV_MODEL"):
        raise pytest.UsageError("set EVENTKV (the eventkv binary) and EVENTKV_MODEL (a GGUF)")


class Server:
    """One `eventkv serve` process; start() again after kill() reuses its state dir."""

    def __init__(self, state_dir, *args, port=0):
        self.state_dir = pathlib.Path(state_dir)
        self.args = list(args)
        self.port = port
        self.proc = None
        self.url = None
        self.starts = 0

    def start(self, timeout=60):
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        # stdout goes to a file (not a pipe) so a chatty server never blocks on it.
        self.log = self.state_dir.parent / f"{self.state_dir.name}.log{self.starts}"
        cmd = [os.environ["EVENTKV"], "serve", "-m", os.environ["EVENTKV_MODEL"],
               "--host", "127.0.0.1", "--port", str(self.port), "--api-key", KEY,
               "--state-dir", str(self.state_dir), "-t", "2", *self.args]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = LISTENING.search(self.log.read_text(errors="replace"))
            if match:
                self.url = match.group(1)
                # A restart must come back on the same port: clients keep the URL.
                self.port = int(self.url.rsplit(":", 1)[1])
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        output = self.log.read_text(errors="replace")
        self.stop()
        raise RuntimeError(f"eventkv serve did not start ({' '.join(cmd)}):\n{output}")

    def kill(self):
        """SIGKILL: no chance to flush or clean up, like a crash."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc:
            self.proc.wait(timeout=30)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self):
        return self.log.read_text(errors="replace")


class Api:
    """requests with the server's URL and key; methods return the response."""

    def __init__(self, url, key=KEY):
        self.url = url
        self.http = requests.Session()
        if key is not None:
            self.http.headers["Authorization"] = f"Bearer {key}"

    def request(self, method, path, json=None, timeout=120, **kw):
        return self.http.request(method, self.url + path, json=json, timeout=timeout, **kw)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, json=None, **kw):
        return self.request("POST", path, json=json, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def ok(self, method, path, json=None, status=None):
        """The JSON body of a request that must succeed (2xx, or exactly `status`)."""
        r = self.request(method, path, json=json)
        good = r.status_code == status if status else 200 <= r.status_code < 300
        assert good, f"{method} {path} {json!r}: {r.status_code} {r.text[:500]}"
        return r.json()

    def session(self, **body):
        """Creates a session (a unique id unless given) and returns it."""
        body.setdefault("id", unique_id())
        return self.ok("POST", "/sessions", body, status=201)

    def append(self, sid, *events):
        return self.ok("POST", f"/sessions/{sid}/events", {"events": list(events)}, status=201)

    def events(self, sid):
        return self.ok("GET", f"/sessions/{sid}/events")["events"]


_ids = itertools.count()


def unique_id(prefix="t"):
    return f"{prefix}{os.getpid()}-{next(_ids)}"


def assert_error(r, status, kind=None):
    """An error response: the status and the {"error": {...}} shape of serve-api.md."""
    assert r.status_code == status, f"expected {status}, got {r.status_code}: {r.text[:500]}"
    err = r.json()["error"]
    assert isinstance(err["message"], str) and err["message"]
    assert err["code"] == status
    if kind:
        assert err["type"] == kind
    return err


def start_server(tmp_path_factory, name, *args):
    return Server(tmp_path_factory.mktemp(name) / "state", *args).start()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The server most tests share."""
    s = start_server(tmp_path_factory, "shared", "--max-body", str(MAX_BODY),
                     "--max-event-tokens", str(MAX_EVENT_TOKENS), "--max-sessions", "256",
                     "-c", "2048")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def api(server):
    return Api(server.url)


@pytest.fixture
def fresh_server(tmp_path_factory):
    """A server of the test's own, for tests that kill or restart it."""
    servers = []

    def make(*args):
        s = start_server(tmp_path_factory, "own", "-c", "2048", *args)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()
