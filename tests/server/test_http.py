"""The HTTP front end on a hostile network (issue 24, findings 2-4): every way of sending a
body is bounded, slow clients are cut off without denying service to others, HTTP/1.1 framing
follows RFC 9112 (pipelining, keep-alive, conflicting lengths, transfer codings, Host,
half-close) and shutdown has a deadline. Limits are scaled down by flags so each case is fast."""
import concurrent.futures as cf
import gzip
import json
import signal
import socket
import threading
import time

import numpy as np
import pytest
import requests

from conftest import Server, write_config

LIMITS = ["--rest_api_max_body_bytes=1000000", "--rest_api_timeout_in_ms=3000",
          "--rest_api_header_timeout_in_ms=1000", "--rest_api_idle_timeout_in_ms=1500",
          "--rest_api_max_header_bytes=8192", "--max_json_parsed_bytes=8000000",
          "--rest_api_max_connections=300", "--shutdown_grace_seconds=2"]


@pytest.fixture(scope="module")
def srv(repo, tmp_path_factory):
    root, _ = repo
    d = tmp_path_factory.mktemp("http")
    cfg = write_config(d / "models.config", root, ["mlp"])
    s = Server([f"--model_config_file={cfg}", "--file_system_poll_wait_seconds=0"] + LIMITS, d)
    try:
        yield s.wait_ready()
    finally:
        assert s.stop() == 0, "\n".join(s.log_lines)


def predict_body(x):
    return json.dumps({"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.ravel().tolist()}]}).encode()


def request(path, body=b"", headers=None, method="POST", version="HTTP/1.1", host=True):
    lines = [f"{method} {path} {version}"]
    if host:
        lines.append("Host: kiln")
    hdrs = {"Content-Length": str(len(body))} if headers is None else headers
    lines += [f"{k}: {v}" for k, v in hdrs.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def connect(srv, timeout=10):
    return socket.create_connection(("127.0.0.1", srv.rest_port), timeout=timeout)


class Reader:
    """Reads HTTP responses (Content-Length framed) from a socket."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _more(self):
        try:
            c = self.sock.recv(65536)
        except ConnectionResetError:
            c = b""
        self.buf += c
        return bool(c)

    def response(self):
        while b"\r\n\r\n" not in self.buf:
            if not self._more():
                return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        n = int(headers.get("content-length", 0))
        while len(self.buf) < n:
            if not self._more():
                break
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, headers, body

    def closed(self):
        """True when the server closes the connection (within the socket's timeout)."""
        try:
            return not self._more() and not self.buf
        except socket.timeout:
            return False


def exchange(srv, data, timeout=10):
    """Sends raw bytes; returns (first response, whether the server then closed)."""
    with connect(srv, timeout) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        r = Reader(s)
        first = r.response()
        return first, r.closed()


def error_of(resp):
    return json.loads(resp[2])["error"]


# --- finding 4: framing -------------------------------------------------------------------

def test_pipelined_predicts_are_all_answered_in_order(srv, repo):
    _, ref = repo
    xs, ys = ref["mlp_x"], ref["mlp_y"]
    data = b"".join(request("/v2/models/mlp/infer", predict_body(xs[i:i + 1])) for i in range(5))
    with connect(srv) as s:
        s.sendall(data)
        r = Reader(s)
        for i in range(5):
            status, _, body = r.response()
            assert status == 200, body
            got = np.array(json.loads(body)["outputs"][0]["data"], np.float32)
            np.testing.assert_allclose(got, ys[i].ravel(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case,head,status", [
    ("conflicting lengths", "Content-Length: 2\r\nContent-Length: 3", 400),
    ("signed length", "Content-Length: +2", 400),
    ("length list that disagrees", "Content-Length: 2, 3", 400),
    ("TE and CL together", "Transfer-Encoding: chunked\r\nContent-Length: 2", 400),
    ("unsupported transfer coding", "Transfer-Encoding: gzip, chunked", 501),
    ("chunked not last", "Transfer-Encoding: chunked, gzip", 400),
    ("obsolete line folding", "Content-Length: 2\r\n  folded", 400),
    ("space before colon", "Content-Length : 2", 400),
])
def test_ambiguous_framing_is_refused_and_the_connection_closed(srv, case, head, status):
    data = f"POST /v1/models/mlp:predict HTTP/1.1\r\nHost: kiln\r\n{head}\r\n\r\n{{}}".encode()
    # A second request follows on the same connection: it must never be answered.
    data += request("/v1/models/mlp", method="GET", headers={})
    start = time.time()
    resp, closed = exchange(srv, data, timeout=5)
    assert resp is not None and resp[0] == status, (case, resp)
    assert closed, f"{case}: the connection stayed open after a framing error"
    assert time.time() - start < 3, f"{case}: the answer took {time.time() - start:.1f} s"


def test_http11_without_host_and_unknown_versions(srv):
    resp, closed = exchange(srv, request("/v1/models/mlp", method="GET", headers={}, host=False))
    assert resp[0] == 400 and "Host" in error_of(resp) and closed
    resp, _ = exchange(srv, request("/v1/models/mlp", method="GET", headers={}, version="HTTP/2.0"))
    assert resp[0] == 505
    # HTTP/1.0 needs no Host and closes after the answer unless asked to keep alive.
    resp, closed = exchange(srv, request("/v1/models/mlp", method="GET", headers={},
                                         version="HTTP/1.0", host=False))
    assert resp[0] == 200 and closed


def test_chunked_bodies_and_malformed_chunks(srv, repo):
    _, ref = repo
    body = predict_body(ref["mlp_x"][:1])
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 100]), body[i:i + 100])
                       for i in range(0, len(body), 100)) + b"0\r\nX-Trailer: 1\r\n\r\n"
    resp, _ = exchange(srv, request("/v2/models/mlp/infer", chunked,
                                    {"Transfer-Encoding": "chunked", "Connection": "close"}))
    assert resp[0] == 200, resp
    for bad in (b"zz\r\n{}\r\n0\r\n\r\n", b"2\r\n{}}\r\n0\r\n\r\n", b"-2\r\n{}\r\n0\r\n\r\n"):
        resp, closed = exchange(srv, request("/v2/models/mlp/infer", bad,
                                             {"Transfer-Encoding": "chunked"}), timeout=5)
        assert resp[0] == 400 and closed, (bad, resp)


def test_half_closed_client_gets_its_answer(srv, repo):
    _, ref = repo
    with connect(srv) as s:
        s.sendall(request("/v2/models/mlp/infer", predict_body(ref["mlp_x"][:1])))
        s.shutdown(socket.SHUT_WR)
        r = Reader(s)
        resp = r.response()
        assert resp is not None and resp[0] == 200
        assert r.closed()


def test_half_closed_mid_body_gets_a_400(srv, repo):
    # The client shuts its write side before the body it announced is all there: a 400 that
    # says so (it was a silent close).
    _, ref = repo
    body = predict_body(ref["mlp_x"][:1])
    with connect(srv) as s:
        s.sendall(request("/v2/models/mlp/infer", headers={"Content-Length": str(len(body))}) +
                  body[:len(body) // 2])
        s.shutdown(socket.SHUT_WR)
        r = Reader(s)
        resp = r.response()
        assert resp is not None and resp[0] == 400, resp
        assert r.closed()


def test_expect_100_continue(srv, repo):
    _, ref = repo
    body = predict_body(ref["mlp_x"][:1])
    with connect(srv) as s:
        s.sendall(request("/v2/models/mlp/infer", headers={"Content-Length": str(len(body)),
                                                           "Expect": "100-continue"}))
        r = Reader(s)
        assert r.response()[0] == 100
        s.sendall(body)
        assert r.response()[0] == 200


def test_keep_alive_and_idle_timeout(srv):
    with connect(srv) as s:
        r = Reader(s)
        for _ in range(20):  # no per-connection request cap
            s.sendall(request("/v1/models/mlp", method="GET", headers={}))
            assert r.response()[0] == 200
        start = time.time()
        assert r.closed(), "an idle keep-alive connection was never closed"
        assert 1.0 < time.time() - start < 4.0


def test_256_keep_alive_connections_all_answered(srv, repo):
    _, ref = repo
    body = predict_body(ref["mlp_x"][:1])

    def client(_):
        with requests.Session() as s:
            return [s.post(srv.url + "/v2/models/mlp/infer", data=body, timeout=30).status_code
                    for _ in range(5)]

    with cf.ThreadPoolExecutor(256) as pool:
        codes = [c for cs in pool.map(client, range(256)) for c in cs]
    assert codes == [200] * len(codes)


def test_connection_limit_answers_503(srv):
    socks = [connect(srv) for _ in range(299)]
    try:
        time.sleep(0.2)
        with connect(srv) as extra:  # the 300th is still served
            extra.sendall(request("/v1/models/mlp", method="GET", headers={}))
            assert Reader(extra).response()[0] == 200
        # Once the idle ones are gone (header timeout), room again.
    finally:
        for s in socks:
            s.close()
    time.sleep(0.3)
    srv_full = [connect(srv) for _ in range(300)]
    try:
        time.sleep(0.2)
        resp, closed = exchange(srv, request("/v1/models/mlp", method="GET", headers={}))
        assert resp[0] == 503 and closed
    finally:
        for s in srv_full:
            s.close()


# --- finding 2: memory --------------------------------------------------------------------

def test_body_limit_holds_however_the_body_is_framed(srv):
    rss0 = srv.rss_kib()
    # chunked, 5 MB against a 1 MB limit: refused as it grows
    chunk = b"%x\r\n%s\r\n" % (65536, b"1" * 65536)
    resp, closed = exchange(srv, request("/v1/models/mlp:predict", chunk * 80,
                                         {"Transfer-Encoding": "chunked"}))
    assert resp[0] == 413 and closed, resp
    # gzip that inflates to 20 MB
    bomb = gzip.compress(b"0" * 20_000_000)
    resp, _ = exchange(srv, request("/v1/models/mlp:predict", bomb,
                                    {"Content-Length": str(len(bomb)),
                                     "Content-Encoding": "gzip"}))
    assert resp[0] == 413 and "decompressed" in error_of(resp), resp
    # a declared length over the limit: refused before the body is read
    resp, closed = exchange(srv, request("/v1/models/mlp:predict",
                                         headers={"Content-Length": "5000000"}))
    assert resp[0] == 413 and closed
    # no length at all: the body is empty (RFC 9112), what follows is not a request
    with connect(srv) as s:
        s.sendall(request("/v1/models/mlp:predict", headers={}) + b"x" * 3_000_000)
        r = Reader(s)
        assert r.response()[0] == 400  # an empty predict body
        assert r.response()[0] == 414  # "xxx..." is no request line
        assert r.closed()
    # a header line, a request line and many short headers, none with an end
    for data, status in ((b"GET /v1/models/mlp HTTP/1.1\r\nX-Long: " + b"a" * 2_000_000, 431),
                         (b"GET /" + b"a" * 2_000_000, 414),
                         (b"GET / HTTP/1.1\r\n" + b"X-a: b\r\n" * 300_000, 431)):
        resp, closed = exchange(srv, data)
        assert resp[0] == status and closed, (data[:40], resp)
    # a gzip body that is fine once inflated is served
    ok = gzip.compress(b'{"instances": [[' + b",".join([b"0.5"] * 784) + b"]]}")
    resp, _ = exchange(srv, request("/v1/models/mlp:predict", ok,
                                    {"Content-Length": str(len(ok)), "Content-Encoding": "gzip"}))
    assert resp[0] == 200, resp
    assert srv.rss_kib() - rss0 < 64 * 1024, "memory grew with refused bodies"


def test_json_that_would_expand_is_refused_before_parsing(srv):
    body = b'{"instances": [' + b"{}," * 300_000 + b"{}]}"  # 900 KB -> ~40 MB parsed
    resp, _ = exchange(srv, request("/v1/models/mlp:predict", body))
    assert resp[0] == 429 and "once parsed" in error_of(resp), resp


# --- finding 3: slow clients --------------------------------------------------------------

def trickle(srv, data, stop, interval=0.2):
    """Sends `data` a byte at a time; returns seconds until the server closed the connection."""
    start = time.time()
    with connect(srv, timeout=15) as s:
        for b in data:
            if stop.is_set():
                break
            try:
                s.sendall(bytes([b]))
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(interval)
            s.setblocking(False)
            try:
                if s.recv(65536, socket.MSG_PEEK) is not None:
                    break  # answered (408) or closed
            except BlockingIOError:
                pass
            except ConnectionResetError:
                break
            finally:
                s.setblocking(True)
    return time.time() - start


def test_slowloris_does_not_deny_service(srv, repo):
    _, ref = repo
    body = predict_body(ref["mlp_x"][:1])
    stop = threading.Event()
    slow = request("/v2/models/mlp/infer", body)
    with cf.ThreadPoolExecutor(32) as pool:
        futures = [pool.submit(trickle, srv, slow, stop) for _ in range(32)]
        time.sleep(0.3)
        latencies = []
        for _ in range(20):
            t = time.time()
            r = requests.post(srv.url + "/v2/models/mlp/infer", data=body, timeout=10)
            latencies.append(time.time() - t)
            assert r.status_code == 200
        held = [f.result() for f in futures]
        stop.set()
    assert max(latencies) < 2, latencies
    assert max(held) < 4, f"slow clients were held {max(held):.1f} s (header timeout 1 s)"


def test_slow_body_gets_408(srv):
    with connect(srv) as s:
        s.sendall(request("/v1/models/mlp:predict", headers={"Content-Length": "100"}) + b"{")
        start = time.time()
        resp = Reader(s).response()
        assert resp[0] == 408 and "body" in error_of(resp)
        assert 2.5 < time.time() - start < 6  # the 3 s body timeout


def test_sigterm_finishes_despite_a_trickling_client(repo, tmp_path):
    root, _ = repo
    cfg = write_config(tmp_path / "models.config", root, ["mlp"])
    s = Server([f"--model_config_file={cfg}", "--file_system_poll_wait_seconds=0",
                "--rest_api_header_timeout_in_ms=60000", "--rest_api_timeout_in_ms=60000",
                "--shutdown_grace_seconds=2"], tmp_path).wait_ready()
    stop = threading.Event()
    t = threading.Thread(target=trickle, args=(s, request("/v1/models/mlp", method="GET",
                                                            headers={}) * 10, stop))
    t.start()
    time.sleep(0.5)
    start = time.time()
    s.proc.send_signal(signal.SIGTERM)
    try:
        s.proc.wait(10)
    finally:
        stop.set()
        t.join()
    assert s.stop() == 0
    assert time.time() - start < 5


# --- deadlines and overload ---------------------------------------------------------------

def test_deadlines_and_a_full_worker_queue(repo, tmp_path):
    """A request whose deadline (X-Request-Timeout-Ms, or Envoy's expected timeout) passes
    while it waits for a batch gets 504 at its deadline, not after the batch; one that has no
    time left is not run; when every worker is busy and the queue is full, 429 at once."""
    root, ref = repo
    cfg = write_config(tmp_path / "models.config", root, ["mlp"])
    params = tmp_path / "batching.txt"
    params.write_text("max_batch_size { value: 64 } batch_timeout_micros { value: 3000000 }")
    s = Server([f"--model_config_file={cfg}", "--file_system_poll_wait_seconds=0",
                "--enable_batching", f"--batching_parameters_file={params}",
                "--rest_api_num_threads=2", "--rest_api_max_queued_requests=1"],
               tmp_path).wait_ready()
    body = predict_body(ref["mlp_x"][:1])
    url = s.url + "/v2/models/mlp/infer"
    try:
        for header in ("X-Request-Timeout-Ms", "X-Envoy-Expected-Rq-Timeout-Ms"):
            t = time.time()
            r = requests.post(url, data=body, headers={header: "300"}, timeout=10)
            took = time.time() - t
            assert r.status_code == 504 and "deadline" in r.json()["error"], r.text
            assert 0.25 < took < 2.0, took  # the batch would have waited 3 s
        r = requests.post(url, data=body, headers={"X-Request-Timeout-Ms": "0"}, timeout=10)
        assert r.status_code == 504
        r = requests.post(url, data=body, headers={"X-Request-Timeout-Ms": "soon"}, timeout=10)
        assert r.status_code == 400 and "milliseconds" in r.json()["error"]
        # Two workers wait in the 3 s batch, one request waits for a worker: the next is refused
        # at once instead of queueing behind them.
        with cf.ThreadPoolExecutor(3) as pool:
            waiting = [pool.submit(requests.post, url, data=body, timeout=20) for _ in range(3)]
            time.sleep(1.5)  # all three in (on a loaded machine too); the batch runs at 3 s
            t = time.time()
            r = requests.post(url, data=body, timeout=10)
            assert r.status_code == 429 and r.headers.get("Retry-After") == "1", r.text
            assert time.time() - t < 1.0
            assert [f.result().status_code for f in waiting] == [200, 200, 200]
    finally:
        assert s.stop() == 0
