#!/usr/bin/python3
"""A gRPC server that misbehaves at the HTTP/2 level on request, for the clients' tests.

Written on python3-h2 (Debian's hyper-h2 4.1, the HTTP/2 state machine; asyncio for the sockets). It answers any
method by echoing the request's one gRPC message back (as rpcscope.bench.v1.Bench/Echo would, an EchoRequest and
an EchoResponse being the same on the wire), and misbehaves as the request metadata `x-misbehave` says:

  reset-internal   RST_STREAM(INTERNAL_ERROR) instead of an answer
  reset-refused    RST_STREAM(REFUSED_STREAM): the server did not process it, a client may retry it
  ping             a PING first, answered only once the client's PING ACK is in (RST_STREAM after 2 s)
  goaway-after     the answer, then GOAWAY (last stream: this one) and the connection closed
  trailers-only    one HEADERS frame with the status (x-status, default 5) and no message; grpc-message is
                   x-message as it came (percent-encoded, as gRPC sends it; default "trailers only")
  status-text      the answer, then trailers whose grpc-status is x-status as it is (default "abc")
  details          trailers-only INVALID_ARGUMENT with grpc-status-details-bin (base64 of b"detail-bytes")
  http-503         HTTP status 503 and nothing else: no gRPC status
  compressed       the answer's messages compressed as x-encoding says (default gzip; deflate; "none": the
                   compressed flag set without grpc-encoding; any other name: sent as it is under that name)
  echo-headers     the answer, with trailers naming what came: x-got-grpc-timeout, x-got-user-agent,
                   x-got-authority, and x-got-NAME-wire for each NAME-bin header (its value as it was on the wire)
  truncated        a length prefix of x-length bytes (default 100) and 3 bytes of message, then grpc-status 0
  no-status        the answer, then trailers without grpc-status
  announce         a length prefix of x-length bytes (default 2 GiB - 1), then that many zero bytes as fast as the
                   client's flow control lets them go (a client that bounds what it takes resets the stream early)
  bomb             one gzip message that inflates to x-length zero bytes (default 1 GiB): about 1 MB on the wire
  frame-sizes      an empty message, with a trailer x-got-data-frames: the payload sizes of the request's DATA
                   frames, in bytes, in order ("65535,1048576,...")

Options: --max-streams N announces SETTINGS_MAX_CONCURRENT_STREAMS N and counts the streams a client opens over it
once it acknowledged the setting (before, the default of no limit holds); --refuse-first-on-connection sends, for the first request of each connection,
GOAWAY with last stream id 0 (nothing processed: a client may retry it elsewhere) and closes.

--max-frame N announces SETTINGS_MAX_FRAME_SIZE N (hyper-h2 refuses a larger frame: FRAME_SIZE_ERROR) and windows
of 4 N, so that a client may send frames that large.

--cert FILE --key FILE serves TLS (ALPN h2) with that certificate; --alpn LIST offers those protocols instead
(e.g. http/1.1, or "" for no ALPN).

  tests/peers/h2_misbehaving_server.py [--host 127.0.0.1] [--port 0] [--max-streams N] [--refuse-first-on-connection]
                                       [--max-frame N]
                                       [--cert FILE --key FILE [--alpn LIST]]

Prints `HOST:PORT` once it listens; on SIGTERM prints `over-limit N` (streams opened over --max-streams) and
`connections N` (the connections clients opened and sent something on) to stderr
and exits.
"""
import argparse
import asyncio
import gzip
import signal
import ssl
import struct
import sys
import zlib

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

over_limit = 0
bombs = {}  # inflated length -> its gzip
connections = 0


class Connection:
    def __init__(self, reader, writer, options):
        self.counted = False  # counted once it sends bytes: a reachability probe (connect, close) is not a client's
        self.reader, self.writer, self.options = reader, writer, options
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config=config)
        self.bodies = {}
        self.frames = {}  # stream -> the payload sizes of its DATA frames
        self.headers = {}
        self.open = set()
        self.pings = {}  # ping payload -> stream waiting for its ACK
        self.requests = 0
        self.acked = False  # the client has our SETTINGS: from then on it must keep to --max-streams
        self.pending = {}  # stream -> [bytes still to send, zero bytes to send after them]: announce, bomb

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)

    async def run(self):
        self.h2.initiate_connection()
        if self.options.max_streams:
            self.h2.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.options.max_streams})
        if self.options.max_frame:
            window = 4 * self.options.max_frame
            self.h2.update_settings({h2.settings.SettingCodes.MAX_FRAME_SIZE: self.options.max_frame,
                                     h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
            self.h2.increment_flow_control_window(window)
        self.flush()
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    return
                if not self.counted:
                    global connections
                    connections += 1
                    self.counted = True
                for event in self.h2.receive_data(data):
                    if not self.handle(event):
                        self.flush()
                        await self.writer.drain()
                        self.writer.close()
                        return
                self.flush()
                await self.writer.drain()
        except (ConnectionError, h2.exceptions.ProtocolError):
            pass
        finally:
            self.writer.close()

    def handle(self, event):
        global over_limit
        if isinstance(event, h2.events.RequestReceived):
            self.requests += 1
            self.headers[event.stream_id] = dict(event.headers)
            self.bodies[event.stream_id] = b""
            self.open.add(event.stream_id)
            if self.options.max_streams and self.acked and len(self.open) > self.options.max_streams:
                over_limit += 1
            if self.options.refuse_first_on_connection and self.requests == 1:
                self.h2.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=0)
                return False
        elif isinstance(event, h2.events.DataReceived):
            self.bodies[event.stream_id] += event.data
            self.frames.setdefault(event.stream_id, []).append(len(event.data))
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            return self.answer(event.stream_id)
        elif isinstance(event, h2.events.PingAckReceived):
            stream = self.pings.pop(event.ping_data, None)
            if stream is not None:
                self.reply(stream)
        elif isinstance(event, h2.events.SettingsAcknowledged):
            self.acked = True
        elif isinstance(event, h2.events.StreamReset):
            self.open.discard(event.stream_id)
            self.pending.pop(event.stream_id, None)
        elif isinstance(event, h2.events.WindowUpdated):
            for stream in list(self.pending) if event.stream_id == 0 else [event.stream_id]:
                if stream in self.pending:
                    self.pump(stream)
        elif isinstance(event, h2.events.ConnectionTerminated):
            return False
        return True

    def answer(self, stream):
        how = self.headers[stream].get("x-misbehave", "")
        if how == "reset-internal":
            self.h2.reset_stream(stream, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
            self.open.discard(stream)
        elif how == "reset-refused":
            self.h2.reset_stream(stream, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
            self.open.discard(stream)
        elif how == "ping":
            payload = struct.pack(">Q", stream)
            self.pings[payload] = stream
            self.h2.ping(payload)
            asyncio.get_running_loop().call_later(2.0, self.ping_timeout, payload)
        elif how == "trailers-only":
            code = self.headers[stream].get("x-status", "5")
            self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc"),
                                          ("grpc-status", code),
                                          ("grpc-message", self.headers[stream].get("x-message", "trailers only"))],
                                 end_stream=True)
            self.open.discard(stream)
        elif how == "status-text":
            self.reply(stream, [("grpc-status", self.headers[stream].get("x-status", "abc")),
                                ("grpc-message", "odd status")])
        elif how == "details":
            self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc"),
                                          ("grpc-status", "3"), ("grpc-message", "bad"),
                                          ("grpc-status-details-bin", "ZGV0YWlsLWJ5dGVz")], end_stream=True)
            self.open.discard(stream)
        elif how == "http-503":
            self.h2.send_headers(stream, [(":status", "503")], end_stream=True)
            self.open.discard(stream)
        elif how == "compressed":
            encoding = self.headers[stream].get("x-encoding", "gzip")
            pack = {"gzip": gzip.compress, "deflate": zlib.compress}.get(encoding, lambda m: m)
            body, framed = self.bodies.pop(stream, b""), b""
            while len(body) >= 5:  # each of the request's messages, echoed compressed
                size = struct.unpack(">I", body[1:5])[0]
                packed = pack(body[5:5 + size])
                framed += struct.pack(">BI", 1, len(packed)) + packed
                body = body[5 + size:]
            headers = [(":status", "200"), ("content-type", "application/grpc")]
            if encoding != "none":
                headers.append(("grpc-encoding", encoding))
            self.h2.send_headers(stream, headers)
            self.h2.send_data(stream, framed)
            self.h2.send_headers(stream, [("grpc-status", "0")], end_stream=True)
            self.open.discard(stream)
        elif how == "echo-headers":
            got = []
            for name, value in self.headers[stream].items():
                if name in ("grpc-timeout", "user-agent", ":authority"):
                    got.append(("x-got-" + name.lstrip(":"), value))
                elif name.endswith("-bin"):
                    got.append(("x-got-" + name[:-4] + "-wire", value))
            self.reply(stream, [("grpc-status", "0")] + got)
        elif how == "truncated":
            length = int(self.headers[stream].get("x-length", "100"))
            self.bodies[stream] = struct.pack(">BI", 0, length) + b"abc"
            self.reply(stream)
        elif how == "announce":
            length = int(self.headers[stream].get("x-length", str(2**31 - 1)))
            self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc")])
            self.pending[stream] = [struct.pack(">BI", 0, length), length]
            self.pump(stream)
        elif how == "bomb":
            length = int(self.headers[stream].get("x-length", str(2**30)))
            if length not in bombs:
                bombs[length] = gzip.compress(bytes(length), compresslevel=9)
            self.bodies[stream] = struct.pack(">BI", 1, len(bombs[length])) + bombs[length]
            self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc"),
                                          ("grpc-encoding", "gzip")])
            self.pending[stream] = [self.bodies.pop(stream), 0]
            self.pump(stream)
        elif how == "no-status":
            self.reply(stream, [("x-trailer", "no grpc-status here")])
        elif how == "frame-sizes":
            frames = self.frames.pop(stream, [])
            self.bodies[stream] = b"\0\0\0\0\0"
            self.reply(stream, [("grpc-status", "0"), ("x-got-data-frames", ",".join(map(str, frames)))])
        else:
            self.reply(stream)
            if how == "goaway-after":
                self.h2.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=stream)
                return False
        return True

    def pump(self, stream):
        """Sends what stream's pending [bytes, zeros still owed] holds as far as the windows allow; the trailers
        (grpc-status 0) once all is sent. Called again on each WINDOW_UPDATE."""
        head, zeros = self.pending.get(stream, (b"", 0))
        while stream in self.pending:
            window = min(self.h2.local_flow_control_window(stream), self.h2.max_outbound_frame_size)
            if window <= 0:
                self.pending[stream] = [head, zeros]
                return
            if head:
                chunk, head = head[:window], head[window:]
            else:
                chunk = bytes(min(window, zeros))
                zeros -= len(chunk)
            try:
                if chunk:
                    self.h2.send_data(stream, chunk)
            except h2.exceptions.StreamClosedError:  # the client reset it (its events not read yet): done with it
                del self.pending[stream]
                return
            if not head and zeros == 0:
                del self.pending[stream]
                self.h2.send_headers(stream, [("grpc-status", "0")], end_stream=True)
                self.open.discard(stream)

    def ping_timeout(self, payload):
        stream = self.pings.pop(payload, None)
        if stream is not None:
            self.h2.reset_stream(stream, error_code=h2.errors.ErrorCodes.CANCEL)
            self.open.discard(stream)
            self.flush()

    def reply(self, stream, trailers=(("grpc-status", "0"),)):
        body = self.bodies.pop(stream, b"")
        self.h2.send_headers(stream, [(":status", "200"), ("content-type", "application/grpc")])
        if body:
            self.h2.send_data(stream, body)  # the request's message, prefix and all
        self.h2.send_headers(stream, list(trailers), end_stream=True)
        self.open.discard(stream)
        self.flush()


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-streams", type=int, default=0)
    parser.add_argument("--refuse-first-on-connection", action="store_true")
    parser.add_argument("--max-frame", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--alpn", default="h2")
    options = parser.parse_args()
    tls = None
    if options.cert:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(options.cert, options.key)
        if options.alpn:
            tls.set_alpn_protocols(options.alpn.split(","))
    server = await asyncio.start_server(
        lambda r, w: Connection(r, w, options).run(), options.host, options.port, ssl=tls)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    print(f"over-limit {over_limit}", file=sys.stderr, flush=True)
    print(f"connections {connections}", file=sys.stderr, flush=True)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
