"""A loopback fake OpenAI-compatible chat server for tests and benchmarks.

It answers ``POST .../chat/completions`` after an optional delay, and can be scripted to fail: each
queued fault is used by one request, in order:

- ``ok``: answer normally; ``400``, ``401``, ``429``, ``500``, ``503``: that HTTP error;
- ``401echo``: a 401 whose message echoes the Authorization header (as real providers do with a bad key);
- ``drop``: close the connection without answering; ``hang``: never answer;
- ``garbage``: a 200 whose body is not JSON;
- ``empty``: a 200 with ``"choices": []``; ``null``: a 200 whose message ``content`` is null;
- ``big``: a 200 whose answer is 5 MB of text;
- ``keyecho``: a 200 whose answer quotes the Authorization header (a hostile model or proxy).

``mix`` adds faults drawn per request, deterministically: the n-th arrival of a given request body gets the
fault chosen by a hash of (body, n), so a run meets the same faults whatever the order of its requests, and a
retry of a failed request draws afresh.

Like a provider it can enforce a rate limit per model name (``rate_limit`` requests per ``rate_window_s``
sliding window; above it a 429 with ``Retry-After``, in whole seconds, until the oldest request leaves the
window) and answer after a latency drawn per request (``latency``, e.g. :func:`lognormal_latency`). With
``prompt_cache`` it reports cached prompt tokens as OpenAI's implicit cache does (``usage.prompt_tokens_details.
cached_tokens``): the longest prefix a request shares with an earlier one of the same model, counted from
1,024 tokens in steps of 128 (about four characters a token). Run standalone::

    python -m trustsim.llm.fake_server --port 8765 --delay 0.2
    python -m trustsim.llm.fake_server --mix empty=0.2          # 20 % empty choices
    python -m trustsim.llm.fake_server --mix 429=0.1,500=0.05,drop=0.05
    python -m trustsim.llm.fake_server --rpm 120 --median 1.5      # 120 requests/min per model, lognormal
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from trustsim.llm.caching import PrefixCache, cacheable_tokens, prompt_text

DEFAULT_REPLY = json.dumps(
    {
        "action": "pass",
        "confidence": {"Q1": 0.9, "Q2": 0.8, "Q3": 0.7, "Q4": 0.6},
        "reasoning": "fake server reply",
    }
)
FAULTS = (
    "ok",
    "400",
    "401",
    "401echo",
    "429",
    "500",
    "503",
    "drop",
    "garbage",
    "hang",
    "empty",
    "null",
    "big",
    "keyecho",
)
BIG_BYTES = 5 * 1024 * 1024


def parse_mix(spec: str) -> dict[str, float]:
    """``"429=0.1,500=0.05"`` -> ``{"429": 0.1, "500": 0.05}`` (fractions of requests, summing to <= 1)."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, share = part.partition("=")
        mix[name.strip()] = float(share)
    return mix


def draw_fault(mix: dict[str, float], body: bytes, arrival: int) -> str | None:
    """The fault of the ``arrival``-th sight of ``body`` under ``mix`` (None = answer normally)."""
    digest = hashlib.sha256(body + b"#" + str(arrival).encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2.0**64
    edge = 0.0
    for fault, share in mix.items():
        edge += share
        if u < edge:
            return fault
    return None


def lognormal_latency(median_s: float, sigma: float = 0.5, seed: int = 0) -> Callable[[], float]:
    """Latencies drawn from a lognormal distribution with this median (seeded: the same sequence each run)."""
    rng = random.Random(seed)
    mu = math.log(median_s)
    return lambda: rng.lognormvariate(mu, sigma)


class FakeServer:
    """A scripted OpenAI-compatible server on 127.0.0.1 running in a background thread.

    Attributes:
        requests: parsed JSON bodies of every chat request that reached a handler, in order.
        accepted: model name -> arrival times (``time.monotonic``) of the requests not refused by the rate
            limit.
        rate_limited: requests answered 429 by the rate limit.
    """

    def __init__(
        self,
        delay_s: float = 0.0,
        reply: str | Callable[[dict[str, Any]], str] = DEFAULT_REPLY,
        port: int = 0,
        mix: dict[str, float] | None = None,
        rate_limit: int | None = None,
        rate_window_s: float = 60.0,
        latency: Callable[[], float] | None = None,
        prompt_cache: bool = False,
    ) -> None:
        self.delay_s = delay_s
        self.rate_limit = rate_limit
        self.rate_window_s = rate_window_s
        self.latency = latency
        self.accepted: dict[str, list[float]] = {}
        self.rate_limited = 0
        self.prompt_cache = prompt_cache
        self._prompts: dict[str, PrefixCache] = {}  # model -> the prompts it was sent (its prompt cache)
        self.mix = dict(mix or {})
        for fault in self.mix:
            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r} in mix; expected one of {FAULTS}")
        if sum(self.mix.values()) > 1.0 + 1e-9 or any(v < 0 for v in self.mix.values()):
            raise ValueError("mix shares must be >= 0 and sum to at most 1")
        self.faults_served: dict[str, int] = {}  # fault name -> how many requests got it (scripted + mix)
        self._seen: dict[bytes, int] = {}
        self.reply = reply
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.peak_in_flight = 0  # most requests being answered at once
        self.faults: deque[str] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()

    # -- control ---------------------------------------------------------------------------------
    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *faults: str) -> None:
        """Queue faults for the next requests (one each, in order)."""
        for fault in faults:
            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}; expected one of {FAULTS}")
        with self._lock:
            self.faults.extend(faults)

    def most_in_window(self, model: str | None = None) -> int:
        """The most accepted requests (of one model, default: the busiest) within any ``rate_window_s``."""
        models = [model] if model is not None else list(self.accepted)
        best = 0
        for name in models:
            times = self.accepted.get(name, [])
            start = 0
            for end, t in enumerate(times):
                while t - times[start] >= self.rate_window_s:
                    start += 1
                best = max(best, end - start + 1)
        return best

    def _over_limit(self, model: str) -> float | None:
        """Seconds until a request of ``model`` would be accepted, when it is over the rate limit now (the
        request is counted as accepted otherwise)."""
        now = time.monotonic()
        with self._lock:
            times = self.accepted.setdefault(model, [])
            if self.rate_limit is not None:
                recent = [t for t in times[-self.rate_limit :] if now - t < self.rate_window_s]
                if len(recent) >= self.rate_limit:
                    self.rate_limited += 1
                    return recent[0] + self.rate_window_s - now
            times.append(now)
            return None

    def body_digests(self) -> list[str]:
        """SHA-256 of each received request's messages (to compare what was sent across runs)."""
        return [
            hashlib.sha256(json.dumps(r.get("messages"), sort_keys=True).encode()).hexdigest()
            for r in self.requests
        ]

    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self._run, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._server is not None and self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        if self._thread is not None:
            self._thread.join(5)

    async def _shutdown(self) -> None:
        assert self._server is not None and self._loop is not None
        self._server.close()
        tasks = [t for t in asyncio.all_tasks(self._loop) if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._loop.stop()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------------
    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(self.serve())
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def serve(self) -> asyncio.AbstractServer:
        server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        return server

    def _next_fault(self, body: bytes) -> str | None:
        with self._lock:
            fault = self.faults.popleft() if self.faults else None
            if fault is None and self.mix:
                digest = hashlib.sha256(body).digest()
                arrival = self._seen.get(digest, 0)
                self._seen[digest] = arrival + 1
                fault = draw_fault(self.mix, body, arrival)
            if fault is not None:
                self.faults_served[fault] = self.faults_served.get(fault, 0) + 1
            return fault

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self._respond(lines[0], body, writer, headers):
                    return
        except (
            asyncio.IncompleteReadError,
            ConnectionError,
            asyncio.LimitOverrunError,
            asyncio.CancelledError,
        ):
            pass  # client went away, or the server is shutting down
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _respond(
        self, request_line: str, body: bytes, writer: asyncio.StreamWriter, headers: dict[str, str]
    ) -> bool:
        if "chat/completions" not in request_line:
            self._write(writer, 404, b'{"error": {"message": "not found"}}')
            return True
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            payload = {}
        self.requests.append(payload)
        self.headers.append(headers)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer(payload, body, writer, headers)
        finally:
            self.in_flight -= 1

    async def _answer(
        self, payload: dict[str, Any], body: bytes, writer: asyncio.StreamWriter, headers: dict[str, str]
    ) -> bool:
        fault = self._next_fault(body)
        wait = self._over_limit(str(payload.get("model", "")))
        if wait is not None:  # a provider refuses at once, saying when to come back (whole seconds)
            error = json.dumps(
                {"error": {"message": "rate limit reached", "type": "requests", "code": "429"}}
            )
            self._write(writer, 429, error.encode(), {"retry-after": str(max(1, math.ceil(wait)))})
            return True
        delay = self.latency() if self.latency is not None else self.delay_s
        if delay:
            await asyncio.sleep(delay)
        if fault == "hang":
            await asyncio.sleep(3600)
        if fault == "drop":
            writer.transport.abort()
            return False
        if fault in ("400", "401", "429", "500", "503"):
            error = json.dumps({"error": {"message": f"fake {fault}", "type": "fake", "code": fault}})
            extra = {"retry-after": "0"} if fault == "429" else {}
            self._write(writer, int(fault), error.encode(), extra)
            return True
        if fault == "401echo":
            given = headers.get("authorization", "").removeprefix("Bearer ").strip()
            message = f"Incorrect API key provided: {given}. You can find your API key at https://example"
            error = json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": 401}})
            self._write(writer, 401, error.encode())
            return True
        if fault == "garbage":
            self._write(writer, 200, b"<html>\x00\xff not json {{{")
            return True
        text = self.reply(payload) if callable(self.reply) else self.reply
        if fault == "big":
            text = ("A 5 MB answer. " * (BIG_BYTES // 15 + 1))[:BIG_BYTES]
        elif fault == "keyecho":
            text = f"{text}\nREASONING: the header was {headers.get('authorization', '')}"
        messages = payload.get("messages") or []
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1
        cached = self._cached_tokens(str(payload.get("model", "")), messages) if self.prompt_cache else 0
        response = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": payload.get("model", "fake"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(text) // 4 + 1,
                "total_tokens": prompt_tokens + len(text) // 4 + 1,
            },
        }
        if self.prompt_cache:
            response["usage"]["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt_tokens)}
        if fault == "empty":
            response["choices"] = []
        elif fault == "null":
            response["choices"][0]["message"]["content"] = None
        self._write(writer, 200, json.dumps(response).encode())
        return True

    def _cached_tokens(self, model: str, messages: list[dict[str, Any]]) -> int:
        """Tokens of the longest prefix this prompt shares with an earlier one of ``model`` (OpenAI's rule:
        from 1,024 tokens, in steps of 128); the prompt is remembered."""
        with self._lock:
            shared = self._prompts.setdefault(model, PrefixCache()).shared(prompt_text(messages))
        return cacheable_tokens(shared / 4)

    @staticmethod
    def _write(
        writer: asyncio.StreamWriter, status: int, body: bytes, extra: dict[str, str] | None = None
    ) -> None:
        reason = {
            200: "OK",
            400: "Bad Request",
            401: "Unauthorized",
            404: "Not Found",
            429: "Too Many Requests",
            500: "Internal Server Error",
        }.get(status, "Service Unavailable")
        head = [
            f"HTTP/1.1 {status} {reason}",
            "content-type: application/json",
            f"content-length: {len(body)}",
        ]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--mix", default="", help="deterministic fault shares, e.g. 429=0.1,500=0.05,drop=0.05"
    )
    parser.add_argument("--rpm", type=int, default=None, help="requests per minute accepted per model name")
    parser.add_argument("--median", type=float, default=None, help="lognormal latency with this median (s)")
    args = parser.parse_args()
    server = FakeServer(
        delay_s=args.delay,
        port=args.port,
        mix=parse_mix(args.mix),
        rate_limit=args.rpm,
        latency=lognormal_latency(args.median) if args.median else None,
    )

    async def run() -> None:
        srv = await server.serve()
        print(f"PORT {server.port}", flush=True)
        async with srv:
            await srv.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
