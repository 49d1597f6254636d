#!/usr/bin/env python3
"""A Python gRPC client for rpcscope's A/B runs: calls Bench/Echo with a bytes payload (or, with --sum N,
Bench/Sum with N numbers), under rpcscope's client protocol (rpcscope_client.py, docs/client-protocol.md). The
request is serialised and the reply parsed by the Python protobuf runtime on every call, as a real client's would
be: what an A/B of PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp against =python compares. A bytes field costs either
runtime a copy or two; numbers are where the pure-Python runtime pays (100,000 int64s: 28 ms against 1.4 ms).

    rpcscope-cli ab --a builtin --b builtin --client 'python3 examples/clients/grpc_echo_client.py --sum 100000' \\
        --a-client-env PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=cpp \\
        --b-client-env PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python --call rpcscope.bench.v1.Bench/Sum -n 200 -c 1

--aio uses grpc.aio instead of the blocking API. The target is RPCSCOPE_TARGET (or --target HOST:PORT).
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import rpcscope_client  # noqa: E402


def size(text):
    """'10MB' -> 10485760 (KB, MB, GB are powers of 1024; a plain number is bytes)."""
    units = {"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "B": 1}
    upper = text.strip().upper()
    for unit, factor in units.items():
        if upper.endswith(unit):
            return int(float(upper[: -len(unit)]) * factor)
    return int(upper)


def bench_module():
    """The bench proto's Python module, generated from the repository's bench.proto by protoc when not importable."""
    proto_root = HERE.parent.parent / "proto"
    out = pathlib.Path(os.environ.get("RPCSCOPE_PY_GEN") or tempfile.mkdtemp(prefix="rpcscope-py-"))
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "rpcscope/bench/v1/bench_pb2.py").exists():
        protoc = shutil.which("protoc")
        if not protoc:
            sys.exit("grpc_echo_client: protoc is not installed (apt install protobuf-compiler)")
        subprocess.run([protoc, "-I", str(proto_root), "--python_out", str(out),
                        str(proto_root / "rpcscope/bench/v1/bench.proto")], check=True)
    sys.path.insert(0, str(out))
    from rpcscope.bench.v1 import bench_pb2  # noqa: PLC0415 - generated just above
    return bench_pb2


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=os.environ.get("RPCSCOPE_TARGET"), help="HOST:PORT")
    parser.add_argument("--payload-bytes", type=size, default=2, help="the request's bytes field (e.g. 10MB)")
    parser.add_argument("--sum", type=int, metavar="N", help="call Sum with the numbers 0 .. N-1 instead of Echo")
    parser.add_argument("--aio", action="store_true", help="grpc.aio instead of the blocking API")
    args = parser.parse_args()
    if not args.target:
        sys.exit("grpc_echo_client: no target (--target HOST:PORT, or run it from rpcscope)")
    import grpc  # noqa: PLC0415 - after the arguments, so --help works without grpcio

    bench = bench_module()
    if args.sum is not None:
        request_type, response_type = bench.SumRequest, bench.SumResponse
        request = request_type(nums=list(range(args.sum)))
        method = "/rpcscope.bench.v1.Bench/Sum"
        what = "Sum of %d numbers" % args.sum
    else:
        request_type, response_type = bench.EchoRequest, bench.EchoResponse
        request = request_type(payload=b"x" * args.payload_bytes)
        method = "/rpcscope.bench.v1.Bench/Echo"
        what = "Echo of a %d-byte payload" % args.payload_bytes
    sent = request.ByteSize()
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    print("grpc_echo_client: %s, %s, protobuf runtime %s, %s" % (
        args.target, what, protobuf_runtime(), "grpc.aio" if args.aio else "grpcio"), file=sys.stderr)

    if args.aio:
        import asyncio  # noqa: PLC0415

        async def run():
            async with grpc.aio.insecure_channel(args.target, options=options) as channel:
                await channel.channel_ready()
                echo = channel.unary_unary(method, request_serializer=request_type.SerializeToString,
                                           response_deserializer=response_type.FromString)

                async def call():
                    reply = await echo(request)
                    return sent, reply.ByteSize()

                await rpcscope_client.serve_async(call)

        asyncio.run(run())
        return
    with grpc.insecure_channel(args.target, options=options) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        echo = channel.unary_unary(method, request_serializer=request_type.SerializeToString,
                                   response_deserializer=response_type.FromString)

        def call():
            reply = echo(request)
            return sent, reply.ByteSize()

        rpcscope_client.serve(call)


def protobuf_runtime():
    from google.protobuf.internal import api_implementation  # noqa: PLC0415
    return api_implementation.Type()


if __name__ == "__main__":
    main()
