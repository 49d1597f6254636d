#!/usr/bin/python3
"""A msgpack-rpc peer written apart from rpcscope: asyncio + python3-msgpack (streaming Unpacker).

    /usr/bin/python3 tests/peers/msgpackrpc_server.py [--host 127.0.0.1] [--port 0]

Prints one line, `HOST:PORT` (e.g. `127.0.0.1:40123`), to stdout once it listens. Stops on SIGTERM or SIGINT.

msgpack-rpc: request [0, msgid, method, params] -> response [1, msgid, error, result]; notification
[2, method, params] gets no response. Requests are read as they stream in and several may be in flight on one
connection; each response carries its request's msgid and may come out of order (Echo with delay_us answers late).

Methods (the bench ones also under their full names, "rpcscope.bench.v1.Bench.Sum" or "/rpcscope.bench.v1.Bench/Sum"):
  Sum       params [nums] or [{"nums": nums}]                              -> int (int64, wrapping)
  sum_nums  params [nums]                                                  -> int
  Echo      params [payload, response_size?, delay_us?] or [{"payload": ..., "response_size": ..., "delay_us": ...}]
            -> payload (bin; str payloads come back as str), or response_size zero bytes when set
  List      params [count, name_size] or [{"count": ..., "name_size": ...}]
            -> [{"id": i, "name": "x" * name_size, "score": i * 0.5}, ...]
Errors (unknown method, bad params) are a str in the error element, result nil.

--claim bin|str|ext|array: a hostile server instead: every request is answered with a reply whose result is a header of
that kind claiming 2 GiB (bin 32, str 32, ext 32, array 32 of 2^31 elements), three bytes of it, and nothing more.
"""

import argparse
import asyncio
import signal
import socket
import struct
import sys

import msgpack

MAX_ITEMS = 10_000_000  # as the built-in server
MAX_NAME = 1_000_000
SERVICE = "rpcscope.bench.v1.Bench"


class RpcError(Exception):
    pass


def _args(params, names, camel=()):
    """Positional params, or one map keyed by field name (lowerCamelCase names accepted too): a list by `names`."""
    if not isinstance(params, (list, tuple)):
        raise RpcError(f"params must be an array, got {type(params).__name__}")
    if len(params) == 1 and isinstance(params[0], dict):
        m = params[0]
        unknown = set(m) - set(names) - set(camel)
        if unknown:
            raise RpcError(f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        out = []
        for i, name in enumerate(names):
            v = m.get(name)
            if v is None and i < len(camel):
                v = m.get(camel[i])
            out.append(v)
        return out
    if len(params) > len(names):
        raise RpcError(f"expected at most {len(names)} params ({', '.join(names)}), got {len(params)}")
    return list(params) + [None] * (len(names) - len(params))


def _int(v, what, lo=-(2**63), hi=2**63 - 1):
    if isinstance(v, bool) or not isinstance(v, int):
        raise RpcError(f"{what}: expected an integer, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise RpcError(f"{what}: {v} is out of range")
    return v


def _sum(nums):
    if nums is None:
        nums = []
    if not isinstance(nums, (list, tuple)):
        raise RpcError(f"nums: expected an array, got {type(nums).__name__}")
    total = sum(_int(n, f"nums[{i}]") for i, n in enumerate(nums))
    return (total + 2**63) % 2**64 - 2**63


def m_sum(params):
    (nums,) = _args(params, ["nums"])
    return _sum(nums), 0


def m_sum_nums(params):
    if not isinstance(params, (list, tuple)) or len(params) != 1:
        raise RpcError("sum_nums takes one param: an array of integers")
    return _sum(params[0]), 0


def m_echo(params):
    payload, size, delay = _args(params, ["payload", "response_size", "delay_us"],
                                 ["payload", "responseSize", "delayUs"])
    if payload is None:
        payload = b""
    if not isinstance(payload, (bytes, str)):
        raise RpcError(f"payload: expected bin or str, got {type(payload).__name__}")
    if size is not None:
        payload = bytes(_int(size, "response_size", 0, 2**32 - 1))  # that many zero bytes
    delay = 0 if delay is None else _int(delay, "delay_us", 0, 2**32 - 1)
    return payload, delay


def m_list(params):
    count, name_size = _args(params, ["count", "name_size"], ["count", "nameSize"])
    count = min(_int(count or 0, "count", 0, 2**32 - 1), MAX_ITEMS)
    name = "x" * min(_int(name_size or 0, "name_size", 0, 2**32 - 1), MAX_NAME)
    return [{"id": i, "name": name, "score": i * 0.5} for i in range(count)], 0


METHODS = {"Sum": m_sum, "sum_nums": m_sum_nums, "Echo": m_echo, "List": m_list}
for _short in ("Sum", "Echo", "List"):
    METHODS[f"{SERVICE}.{_short}"] = METHODS[f"/{SERVICE}/{_short}"] = METHODS[f"{SERVICE}/{_short}"] = METHODS[_short]


class Connection(asyncio.Protocol):
    connections = set()

    def connection_made(self, transport):
        self.transport = transport
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self.packer = msgpack.Packer()  # use_bin_type: bytes as bin, str as str
        self.loop = asyncio.get_running_loop()
        Connection.connections.add(self)

    def connection_lost(self, exc):
        Connection.connections.discard(self)

    def data_received(self, data):
        self.unpacker.feed(data)
        try:
            for message in self.unpacker:
                self.handle(message)
        except (ValueError, msgpack.UnpackException) as exc:  # not msgpack: nothing to answer to
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            print(f"msgpackrpc_server: closing a connection: not msgpack ({why})", file=sys.stderr)
            self.transport.close()

    claim = None  # --claim

    def reply(self, msgid, error, result):
        if self.transport.is_closing():
            return
        if Connection.claim:
            header = {"bin": b"\xc6", "str": b"\xdb", "ext": b"\xc9", "array": b"\xdd"}[Connection.claim]
            header += struct.pack(">I", 0x80000000) + (b"\x01" if Connection.claim == "ext" else b"")
            self.transport.write(b"\x94\x01" + self.packer.pack(msgid) + b"\xc0" + header + b"abc")
            return
        try:
            data = self.packer.pack([1, msgid, error, result])
        except (OverflowError, TypeError, ValueError) as exc:
            data = self.packer.pack([1, msgid, f"cannot pack the result: {exc}", None])
        self.transport.write(data)

    def handle(self, message):
        if not isinstance(message, (list, tuple)) or not message:
            return self.bad(None, "a message must be an array")
        kind = message[0]
        if kind == 0 and len(message) == 4:
            _, msgid, method, params = message
            notify = False
        elif kind == 2 and len(message) == 3:
            _, method, params = message
            msgid, notify = None, True
        else:
            msgid = message[1] if kind == 0 and len(message) > 1 else None
            return self.bad(msgid, f"not a msgpack-rpc request or notification: {message!r:.80}")
        fn = METHODS.get(method) if isinstance(method, str) else None
        try:
            if fn is None:
                raise RpcError(f"unknown method: {method!r:.80}")
            result, delay_us = fn(params)
        except RpcError as exc:
            if not notify:
                self.reply(msgid, str(exc), None)
            return
        if notify:
            return
        if delay_us:
            self.loop.call_later(delay_us / 1e6, self.reply, msgid, None, result)
        else:
            self.reply(msgid, None, result)

    def bad(self, msgid, why):
        if msgid is not None:
            self.reply(msgid, why, None)
        else:
            print(f"msgpackrpc_server: closing a connection: {why}", file=sys.stderr)
            self.transport.close()


async def serve(host, port):
    loop = asyncio.get_running_loop()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server = await loop.create_server(Connection, host, port, family=family, backlog=1024, reuse_address=True)
    bound = server.sockets[0].getsockname()[1]
    print(f"[{host}]:{bound}" if family == socket.AF_INET6 else f"{host}:{bound}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    for c in list(Connection.connections):
        c.transport.close()
    await server.wait_closed()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (default)")
    parser.add_argument("--loop", choices=["auto", "uvloop", "asyncio"], default="auto",
                        help="event loop (auto: uvloop when installed)")
    parser.add_argument("--claim", choices=["bin", "str", "ext", "array"],
                        help="answer with a result header claiming 2 GiB, then 3 bytes and nothing more")
    args = parser.parse_args()
    Connection.claim = args.claim
    if args.loop != "asyncio":
        try:
            import uvloop
            uvloop.install()
        except ImportError:
            if args.loop == "uvloop":
                raise
    try:
        asyncio.run(serve(args.host, args.port))
    except OSError as exc:
        print(f"msgpackrpc_server: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
