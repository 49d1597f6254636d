#!/usr/bin/python3
"""A small grpcio server for test_pysampler.py: no generated code, bytes in and out.

    /usr/bin/python3 tests/profiling/grpc_echo_server.py [--threads N] [--burn-us US]

Listens on 127.0.0.1, port 0 (a free port), and prints the port alone on stdout's first line once it serves.
Methods of service rpcscope.test.Echo, each answering the request's bytes:

* Burn: calls burn_cpu, which spins for about --burn-us (200) microseconds of this thread's CPU;
* Pre: calls pre_burn, the same spin under another name (for the calls made while sampling is off).

The main thread waits in server.wait_for_termination(). No signal handler of its own: SIGTERM ends it as the
default disposition does (or as a sitecustomize's handler makes it).
"""

import argparse
import sys
import time
from concurrent import futures

import grpc

SERVICE = "rpcscope.test.Echo"
BURN_NS = 200_000


def spin(ns):
    end = time.thread_time_ns() + ns
    n = 0
    while time.thread_time_ns() < end:
        n += 1
    return n


def burn_cpu():
    return spin(BURN_NS)


def pre_burn():
    return spin(BURN_NS)


def handle_burn(request, context):
    burn_cpu()
    return request


def handle_pre(request, context):
    pre_burn()
    return request


def main():
    global BURN_NS
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--burn-us", type=int, default=200)
    args = parser.parse_args()
    BURN_NS = args.burn_us * 1000
    handlers = {
        "Burn": grpc.unary_unary_rpc_method_handler(handle_burn),  # no (de)serializers: bytes in and out
        "Pre": grpc.unary_unary_rpc_method_handler(handle_pre),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.threads))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    if not port:
        print("grpc_echo_server: cannot bind 127.0.0.1:0", file=sys.stderr)
        return 1
    server.start()
    print(port, flush=True)
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
