#!/usr/bin/python3
"""A third-party gRPC peer: rpcscope.bench.v1.Bench served by Python grpcio (Debian's python3-grpcio).

    /usr/bin/python3 tests/peers/grpcio_server.py [--host 127.0.0.1] [--port 0] [--proto-root DIR] [--threads N]

The Python code is generated at start-up from DIR/rpcscope/bench/v1/bench.proto (DIR defaults to ../../proto
beside this script) with protoc and grpc_python_plugin into a temporary directory, imported, and the directory
removed. Prints one line, `HOST:PORT` (e.g. `127.0.0.1:40123`), to stdout once it serves. Stops on SIGTERM or
SIGINT (in-flight calls get 0.5 s).

Echo returns the payload, or response_size zero bytes when set (delay_us sleeps in the worker thread); Sum
returns the sum of nums (int64, wrapping); List returns count items {id: i, name: 'x' * name_size, score: i * 0.5}.
The streams as the built-in server has them: Download sends count replies of size bytes, interval_us apart; Upload
counts the messages and payload bytes; Chat answers each request as Echo would.
No server reflection: Debian does not package grpcio-reflection.
"""

import argparse
import importlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent import futures

import grpc

PROTO = "rpcscope/bench/v1/bench.proto"
MAX_ITEMS = 10_000_000  # as the built-in server
MAX_NAME = 1_000_000
GRPC_PLUGIN = "/usr/bin/grpc_python_plugin"
STOPPING = threading.Event()  # set on SIGTERM: ends delay_us sleeps, whose threads would otherwise hold the exit


def generate(proto_root):
    """Runs protoc on the bench proto; returns (bench_pb2, bench_pb2_grpc)."""
    if not os.path.isfile(os.path.join(proto_root, PROTO)):
        raise SystemExit(f"grpcio_server: no {PROTO} under {proto_root} (use --proto-root)")
    plugin = GRPC_PLUGIN if os.path.exists(GRPC_PLUGIN) else shutil.which("grpc_python_plugin")
    if not plugin:
        raise SystemExit("grpcio_server: grpc_python_plugin missing (apt-get install protobuf-compiler-grpc)")
    out = tempfile.mkdtemp(prefix="rpcscope-grpcio-peer-")
    try:
        cmd = ["protoc", f"-I{proto_root}", f"--python_out={out}", f"--grpc_out={out}",
               f"--plugin=protoc-gen-grpc={plugin}", PROTO]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"grpcio_server: {' '.join(cmd)} failed:\n{result.stderr}")
        # regular packages, so that no other "rpcscope" on sys.path can shadow these
        for d in ("rpcscope", "rpcscope/bench", "rpcscope/bench/v1"):
            open(os.path.join(out, d, "__init__.py"), "a").close()
        sys.path.insert(0, out)
        try:
            pb2 = importlib.import_module("rpcscope.bench.v1.bench_pb2")
            pb2_grpc = importlib.import_module("rpcscope.bench.v1.bench_pb2_grpc")
        finally:
            sys.path.remove(out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return pb2, pb2_grpc


def make_servicer(pb2, pb2_grpc):
    class Bench(pb2_grpc.BenchServicer):
        def Echo(self, request, context):
            if request.HasField("response_size"):
                payload = bytes(request.response_size)  # that many zero bytes
            else:
                payload = request.payload
            if request.delay_us:
                STOPPING.wait(request.delay_us / 1e6)
            return pb2.EchoResponse(payload=payload)

        def Sum(self, request, context):
            total = sum(request.nums)
            return pb2.SumResponse(result=(total + 2**63) % 2**64 - 2**63)

        def List(self, request, context):
            name = "x" * min(request.name_size, MAX_NAME)
            count = min(request.count, MAX_ITEMS)
            return pb2.ListResponse(items=[pb2.Item(id=i, name=name, score=i * 0.5) for i in range(count)])

        def Download(self, request, context):
            reply = pb2.EchoResponse(payload=b"x" * min(request.size, MAX_NAME))
            for i in range(request.count):
                if i and request.interval_us and STOPPING.wait(request.interval_us / 1e6):
                    return
                yield reply

        def Upload(self, request_iterator, context):
            messages = size = 0
            for request in request_iterator:
                messages += 1
                size += len(request.payload)
            return pb2.UploadResponse(messages=messages, bytes=size)

        def Chat(self, request_iterator, context):
            for request in request_iterator:
                yield self.Echo(request, context)

    return Bench()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (default)")
    parser.add_argument("--proto-root", default=os.path.normpath(os.path.join(here, "..", "..", "proto")),
                        help="directory holding rpcscope/bench/v1/bench.proto (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=min(32, (os.cpu_count() or 1) + 4),
                        help="worker threads: calls served at once (default: %(default)s, as ThreadPoolExecutor)")
    args = parser.parse_args()

    pb2, pb2_grpc = generate(args.proto_root)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.threads, thread_name_prefix="bench"),
                         options=[("grpc.max_receive_message_length", 64 * 1024 * 1024),
                                  ("grpc.max_send_message_length", 64 * 1024 * 1024),
                                  ("grpc.so_reuseport", 0)])
    pb2_grpc.add_BenchServicer_to_server(make_servicer(pb2, pb2_grpc), server)
    host = f"[{args.host}]" if ":" in args.host else args.host
    try:
        port = server.add_insecure_port(f"{host}:{args.port}")
    except RuntimeError as exc:  # grpcio >= 1.52 raises; older ones return 0
        port = 0
        print(f"grpcio_server: {exc}", file=sys.stderr)
    if port == 0:
        print(f"grpcio_server: cannot bind {host}:{args.port}", file=sys.stderr)
        return 1

    def on_signal(signum, frame):
        if not STOPPING.is_set():
            STOPPING.set()
            server.stop(grace=0.5)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    print(f"{host}:{port}", flush=True)
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
