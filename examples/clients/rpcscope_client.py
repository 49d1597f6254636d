"""rpcscope's client protocol for Python clients (docs/client-protocol.md).

rpcscope starts your client, waits for it to print {"ready": true} (once it has connected), then writes one JSON line
per block on its stdin:
    {"block": 1, "calls": 500, "concurrency": 1, "warmup_calls": 5}     (or "duration_ms": 1000 for "calls")
and reads one JSON line per call on its stdout, then {"done": 1}. serve() does all of that: call it once connected,
with a function that makes one call (raise on failure); it says it is ready, times each call, reports it, and ends
each block. Logs go to stderr.

    import rpcscope_client
    rpcscope_client.serve(lambda: stub.Echo(request))

For asyncio clients, serve_async(make_call) takes a coroutine function.
"""

import asyncio
import json
import sys
import threading
import time

__all__ = ["serve", "serve_async", "call_status"]

_FLUSH_LINES = 512  # reports are written in batches: one write per call would cost the client a syscall each
_FLUSH_SECONDS = 0.05


def call_status(error):
    """The status name of a failed call: a gRPC error's code name, else the exception's class name."""
    code = getattr(error, "code", None)
    if callable(code):
        try:
            return code().name
        except Exception:  # noqa: BLE001 - a code() that fails is no status
            pass
    return type(error).__name__


class _Reporter:
    """Collects call lines and writes them in batches (thread-safe)."""

    def __init__(self, out):
        self._out = out
        self._lines = []
        self._lock = threading.Lock()
        self._last = time.monotonic()

    def call(self, latency_ns, ok, status="OK", error=None, bytes_sent=0, bytes_received=0, warmup=False):
        if ok:
            line = '{"latency_ns": %d, "ok": true, "bytes_sent": %d, "bytes_received": %d%s}\n' % (
                latency_ns, bytes_sent, bytes_received, ', "warmup": true' if warmup else "")
        else:
            line = json.dumps({"latency_ns": latency_ns, "ok": False, "status": status, "error": error or status,
                               "warmup": warmup}) + "\n"
        with self._lock:
            self._lines.append(line)
            now = time.monotonic()
            if len(self._lines) >= _FLUSH_LINES or now - self._last >= _FLUSH_SECONDS:
                self._flush_locked(now)

    def done(self, block):
        with self._lock:
            self._lines.append('{"done": %d}\n' % block)
            self._flush_locked(time.monotonic())

    def ready(self):
        with self._lock:
            self._lines.append('{"ready": true}\n')
            self._flush_locked(time.monotonic())

    def fatal(self, why):
        with self._lock:
            self._lines.append(json.dumps({"fatal": why}) + "\n")
            self._flush_locked(time.monotonic())

    def _flush_locked(self, now):
        self._out.write("".join(self._lines).encode())
        self._out.flush()
        self._lines.clear()
        self._last = now


def _blocks(stdin):
    for raw in stdin:
        if raw.strip():
            yield json.loads(raw)


def _result(value):
    """(bytes_sent, bytes_received) from what a call function returned: a pair, or nothing."""
    if isinstance(value, tuple) and len(value) == 2:
        return value
    return 0, 0


def _timed(call, reporter, warmup):
    start = time.perf_counter_ns()
    try:
        sent, received = _result(call())
    except Exception as error:  # noqa: BLE001 - every failure of a call is reported, not raised
        reporter.call(time.perf_counter_ns() - start, False, call_status(error), str(error)[:500], warmup=warmup)
        return
    reporter.call(time.perf_counter_ns() - start, True, bytes_sent=sent, bytes_received=received, warmup=warmup)


def _run_block(call, block, reporter):
    concurrency = max(1, int(block.get("concurrency", 1)))
    for _ in range(int(block.get("warmup_calls", 0))):
        _timed(call, reporter, True)
    calls = int(block.get("calls", 0))
    deadline = time.monotonic() + block.get("duration_ms", 0) / 1000.0 if not calls else None
    left = [calls]
    lock = threading.Lock()

    def take():
        if deadline is not None:
            return time.monotonic() < deadline
        with lock:
            if left[0] <= 0:
                return False
            left[0] -= 1
            return True

    def caller():
        while take():
            _timed(call, reporter, False)

    if concurrency == 1:
        caller()
    else:
        threads = [threading.Thread(target=caller) for _ in range(concurrency)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    reporter.done(int(block["block"]))


def serve(call, stdin=None, out=None):
    """Runs every block rpcscope sends, calling call() once per call; returns at the end of stdin."""
    reporter = _Reporter(out or sys.stdout.buffer)
    reporter.ready()
    try:
        for block in _blocks(stdin or sys.stdin.buffer):
            _run_block(call, block, reporter)
    except Exception as error:  # noqa: BLE001 - said to rpcscope, which names it, then raised for the traceback
        reporter.fatal("%s: %s" % (type(error).__name__, error))
        raise


async def _timed_async(make_call, reporter, warmup):
    start = time.perf_counter_ns()
    try:
        sent, received = _result(await make_call())
    except Exception as error:  # noqa: BLE001
        reporter.call(time.perf_counter_ns() - start, False, call_status(error), str(error)[:500], warmup=warmup)
        return
    reporter.call(time.perf_counter_ns() - start, True, bytes_sent=sent, bytes_received=received, warmup=warmup)


async def _run_block_async(make_call, block, reporter):
    concurrency = max(1, int(block.get("concurrency", 1)))
    for _ in range(int(block.get("warmup_calls", 0))):
        await _timed_async(make_call, reporter, True)
    calls = int(block.get("calls", 0))
    deadline = time.monotonic() + block.get("duration_ms", 0) / 1000.0 if not calls else None
    left = [calls]

    async def caller():
        while True:
            if deadline is not None:
                if time.monotonic() >= deadline:
                    return
            elif left[0] <= 0:
                return
            else:
                left[0] -= 1
            await _timed_async(make_call, reporter, False)

    await asyncio.gather(*(caller() for _ in range(concurrency)))
    reporter.done(int(block["block"]))


async def serve_async(make_call, stdin=None, out=None):
    """serve() for asyncio: make_call() returns an awaitable per call. Blocks are read off the event loop."""
    reporter = _Reporter(out or sys.stdout.buffer)
    reporter.ready()
    loop = asyncio.get_running_loop()
    source = stdin or sys.stdin.buffer
    try:
        while True:
            raw = await loop.run_in_executor(None, source.readline)
            if not raw:
                return
            if raw.strip():
                await _run_block_async(make_call, json.loads(raw), reporter)
    except Exception as error:  # noqa: BLE001
        reporter.fatal("%s: %s" % (type(error).__name__, error))
        raise
