#!/usr/bin/python3
"""A third-party HTTP/JSON peer: rpcscope's bench service served by FastAPI on uvicorn (Debian's packages).

    /usr/bin/python3 tests/peers/fastapi_server.py [--host 127.0.0.1] [--port 0]

Prints one line, `http://HOST:PORT`, to stdout once it accepts connections (port 0 = a free port, bound here and
handed to uvicorn). Stops on SIGTERM or SIGINT.

Routes (POST, JSON bodies, proto3 JSON field names in snake_case or lowerCamelCase, int64 as number or string):
  /rpcscope.bench.v1.Bench/Sum   {"nums": [1, "2", 3]}                 -> {"result": 6}
  /rpcscope.bench.v1.Bench/Echo  {"payload": "aGk=", "response_size": 3, "delay_us": 0}
                                                                      -> {"payload": "aGk="} or 3 zero bytes
  /rpcscope.bench.v1.Bench/List  {"count": 2, "name_size": 3}
                                  -> {"items": [{"id": 0, "name": "xxx", "score": 0.0}, {"id": 1, ...}]}
  /sum                           {"nums": [1, 2, 3]}                   -> {"result": 6}  (plain FastAPI + pydantic)
int64 results are JSON numbers unless --int64-as-string (proto3 JSON's canonical form, {"result": "6"}).
A body that does not decode gets 400 {"error": "..."} (422 with pydantic's detail on /sum).
"""

import argparse
import asyncio
import base64
import binascii
import json
import socket
import sys
from typing import List

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel

MAX_ITEMS = 10_000_000  # as the built-in server
MAX_NAME = 1_000_000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

INT64_AS_STRING = False
STOPPING = asyncio.Event()  # set on SIGTERM: ends delay_us waits, so that in-flight calls do not hold the exit


class BadRequest(Exception):
    pass


def _field(body, snake, camel, default=None):
    value = body.get(snake)
    if value is None:
        value = body.get(camel)
    return default if value is None else value


def _int(value, what, lo=INT64_MIN, hi=INT64_MAX):
    # proto3 JSON: integers as numbers or decimal strings; floats with an integral value are accepted too.
    if isinstance(value, bool):
        raise BadRequest(f"{what}: expected an integer, got {json.dumps(value)}")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str):
        try:
            n = int(value.strip())
        except ValueError:
            raise BadRequest(f"{what}: expected an integer, got {json.dumps(value)}") from None
    else:
        raise BadRequest(f"{what}: expected an integer, got {json.dumps(value)}")
    if not lo <= n <= hi:
        raise BadRequest(f"{what}: {n} is out of range")
    return n


def _bytes(value, what):
    # proto3 JSON bytes: standard or URL-safe base64, padding optional.
    if not isinstance(value, str):
        raise BadRequest(f"{what}: expected a base64 string, got {json.dumps(value)[:40]}")
    text = value.replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise BadRequest(f"{what}: invalid base64 ({exc})") from None


def _int64_out(n):
    return str(n) if INT64_AS_STRING else n


async def _body(request: Request):
    raw = await request.body()
    if not raw.strip():
        return {}  # an empty request is the all-defaults message
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("the request must be a JSON object")
    return body


def _json(obj, status=200):
    return Response(json.dumps(obj, separators=(",", ":")).encode(), status_code=status,
                    media_type="application/json")


app = FastAPI(title="rpcscope bench peer", docs_url=None, redoc_url=None, openapi_url=None)


@app.exception_handler(BadRequest)
async def _bad_request(request: Request, exc: BadRequest):
    return _json({"error": str(exc)}, 400)


@app.post("/rpcscope.bench.v1.Bench/Sum")
async def bench_sum(request: Request):
    body = await _body(request)
    nums = _field(body, "nums", "nums", [])
    if not isinstance(nums, list):
        raise BadRequest("nums: expected an array")
    total = sum(_int(n, f"nums[{i}]") for i, n in enumerate(nums))
    # int64 arithmetic wraps, as in the built-in server
    total = (total - INT64_MIN) % 2**64 + INT64_MIN
    return _json({"result": _int64_out(total)})


@app.post("/rpcscope.bench.v1.Bench/Echo")
async def bench_echo(request: Request):
    body = await _body(request)
    payload = _bytes(_field(body, "payload", "payload", ""), "payload")
    size = _field(body, "response_size", "responseSize")
    delay_us = _int(_field(body, "delay_us", "delayUs", 0), "delay_us", 0, 2**32 - 1)
    if size is not None:
        payload = bytes(_int(size, "response_size", 0, 2**32 - 1))  # that many zero bytes
    if delay_us:
        try:
            await asyncio.wait_for(STOPPING.wait(), delay_us / 1e6)
        except asyncio.TimeoutError:
            pass
    return _json({"payload": base64.b64encode(payload).decode()})


@app.post("/rpcscope.bench.v1.Bench/List")
async def bench_list(request: Request):
    body = await _body(request)
    count = min(_int(_field(body, "count", "count", 0), "count", 0, 2**32 - 1), MAX_ITEMS)
    name = "x" * min(_int(_field(body, "name_size", "nameSize", 0), "name_size", 0, 2**32 - 1), MAX_NAME)
    return _json({"items": [{"id": _int64_out(i), "name": name, "score": i * 0.5} for i in range(count)]})


# What a plain FastAPI user writes: a pydantic model in, a dict out.
class SumIn(BaseModel):
    nums: List[int]


@app.post("/sum")
async def plain_sum(req: SumIn):
    return {"result": sum(req.nums)}


class ReadyServer(uvicorn.Server):
    """Prints the ready line once uvicorn serves the socket."""

    def __init__(self, config, ready_line):
        super().__init__(config)
        self.ready_line = ready_line

    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        if not self.should_exit:
            print(self.ready_line, flush=True)

    def handle_exit(self, sig, frame):
        # uvicorn 0.17 waits for in-flight calls without limit (a long delay_us would hold the exit): cap it at 1 s.
        if not self.should_exit:
            STOPPING.set()
            asyncio.get_event_loop().call_later(1.0, setattr, self, "force_exit", True)
        super().handle_exit(sig, frame)


def _have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def main():
    global INT64_AS_STRING
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (default)")
    parser.add_argument("--http", choices=["auto", "httptools", "h11"], default="auto",
                        help="uvicorn's HTTP parser (auto: httptools when installed)")
    parser.add_argument("--loop", choices=["auto", "uvloop", "asyncio"], default="auto",
                        help="event loop (auto: uvloop when installed)")
    parser.add_argument("--int64-as-string", action="store_true",
                        help='write int64 fields as strings ({"result": "6"}), as proto3 JSON does')
    args = parser.parse_args()
    INT64_AS_STRING = args.int64_as_string

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on accepted sockets whose proto says TCP (without it,
    # a reply written as headers then body waits on delayed ACKs: ~40 ms a call)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        print(f"fastapi_server: cannot bind {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if family == socket.AF_INET6 else args.host

    config = uvicorn.Config(
        app,
        http=("httptools" if _have("httptools") else "h11") if args.http == "auto" else args.http,
        loop=("uvloop" if _have("uvloop") else "asyncio") if args.loop == "auto" else args.loop,
        ws="none",
        lifespan="off",
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        timeout_keep_alive=60,  # benchmark clients may leave a connection idle between runs
        backlog=1024,
    )
    ReadyServer(config, f"http://{host}:{port}").run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
