// A third-party gRPC peer in Go: grpc-go (Debian's golang-google-grpc-dev, 1.33) serving the bench service's
// methods by hand, with no generated code: a raw codec hands each message over as bytes, and an unknown-service
// handler answers by method name.
//
//	go build -o grpcgo_server .   (GO111MODULE=off GOPATH=/usr/share/gocode; tests/peers/grpcgo_server.sh does it)
//	grpcgo_server [-host 127.0.0.1] [-port 0]
//
// Prints one line, `HOST:PORT`, once it listens. Methods of rpcscope.bench.v1.Bench:
//   - Echo: the request's bytes back (an EchoRequest and an EchoResponse are the same on the wire).
//   - Sum: SumResponse{result} of SumRequest{nums} (packed or not).
//   - Download: DownloadRequest{count, size, interval_us} -> count EchoResponses of size bytes.
//   - Chat: each message echoed.
//
// Request metadata `x-want-status: CODE[:MESSAGE]` makes any call end with that status, `x-delay-ms: N` makes it
// wait N ms first (or until the client gives up), and `x-echo-*` metadata comes back as headers and, renamed
// `x-trailer-*`, as trailers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// rawCodec passes messages through as bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) String() string { return "proto" }

func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// fields calls f for each field of message b: its number, wire type, varint value or length-delimited bytes.
func fields(b []byte, f func(number int, wire int, value uint64, bytes []byte)) error {
	for len(b) > 0 {
		key, n := varint(b)
		if n == 0 {
			return errors.New("bad field key")
		}
		b = b[n:]
		number, wire := int(key>>3), int(key&7)
		switch wire {
		case 0:
			v, n := varint(b)
			if n == 0 {
				return errors.New("bad varint")
			}
			f(number, wire, v, nil)
			b = b[n:]
		case 2:
			l, n := varint(b)
			if n == 0 || uint64(len(b)-n) < l {
				return errors.New("bad length")
			}
			f(number, wire, 0, b[n:n+int(l)])
			b = b[n+int(l):]
		case 1:
			if len(b) < 8 {
				return errors.New("short fixed64")
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return errors.New("short fixed32")
			}
			b = b[4:]
		default:
			return fmt.Errorf("wire type %d", wire)
		}
	}
	return nil
}

func sum(request []byte) ([]byte, error) {
	var total int64
	var bad error
	err := fields(request, func(number, wire int, value uint64, bytes []byte) {
		if number != 1 {
			return
		}
		if wire == 0 {
			total += int64(value)
			return
		}
		for len(bytes) > 0 { // packed
			v, n := varint(bytes)
			if n == 0 {
				bad = errors.New("bad packed varint")
				return
			}
			total += int64(v)
			bytes = bytes[n:]
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "SumRequest: %v", err)
	}
	if total == 0 {
		return []byte{}, nil
	}
	return appendVarint([]byte{0x08}, uint64(total)), nil
}

func download(request []byte, stream grpc.ServerStream) error {
	var count, size, intervalUs uint64
	if err := fields(request, func(number, wire int, value uint64, _ []byte) {
		switch number {
		case 1:
			count = value
		case 2:
			size = value
		case 3:
			intervalUs = value
		}
	}); err != nil {
		return status.Errorf(codes.InvalidArgument, "DownloadRequest: %v", err)
	}
	reply := []byte{}
	if size > 0 {
		reply = appendVarint([]byte{0x0a}, size)
		reply = append(reply, make([]byte, size)...)
	}
	for i := uint64(0); i < count; i++ {
		if i > 0 && intervalUs > 0 {
			time.Sleep(time.Duration(intervalUs) * time.Microsecond)
		}
		if err := stream.SendMsg(&reply); err != nil {
			return err
		}
	}
	return nil
}

func wantedStatus(md metadata.MD) error {
	values := md.Get("x-want-status")
	if len(values) == 0 {
		return nil
	}
	code, message := values[0], ""
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code, message = code[:i], code[i+1:]
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "x-want-status: %q is not a code", values[0])
	}
	return status.Error(codes.Code(n), message)
}

func handle(_ interface{}, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	md, _ := metadata.FromIncomingContext(stream.Context())
	headers, trailers := metadata.MD{}, metadata.MD{}
	for key, values := range md {
		if strings.HasPrefix(key, "x-echo-") {
			headers[key] = values
			trailers["x-trailer-"+strings.TrimPrefix(key, "x-echo-")] = values
		}
	}
	stream.SetTrailer(trailers)
	if err := stream.SetHeader(headers); err != nil {
		return err
	}
	if values := md.Get("x-delay-ms"); len(values) > 0 {
		ms, err := strconv.Atoi(values[0])
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "x-delay-ms: %q is not a number", values[0])
		}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-stream.Context().Done(): // the client's deadline (grpc-timeout) or its cancel
			if stream.Context().Err() == context.DeadlineExceeded {
				return status.Error(codes.DeadlineExceeded, "deadline exceeded while waiting x-delay-ms")
			}
			return status.Error(codes.Canceled, "cancelled while waiting x-delay-ms")
		}
	}
	if err := wantedStatus(md); err != nil {
		return err
	}
	switch method {
	case "/rpcscope.bench.v1.Bench/Echo", "/rpcscope.bench.v1.Bench/Sum", "/rpcscope.bench.v1.Bench/Download":
		var request []byte
		if err := stream.RecvMsg(&request); err != nil {
			return err
		}
		switch method {
		case "/rpcscope.bench.v1.Bench/Echo":
			return stream.SendMsg(&request)
		case "/rpcscope.bench.v1.Bench/Sum":
			reply, err := sum(request)
			if err != nil {
				return err
			}
			return stream.SendMsg(&reply)
		default:
			return download(request, stream)
		}
	case "/rpcscope.bench.v1.Bench/Chat":
		for {
			var message []byte
			if err := stream.RecvMsg(&message); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := stream.SendMsg(&message); err != nil {
				return err
			}
		}
	}
	return status.Errorf(codes.Unimplemented, "unknown method %s", method)
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port (0: any free one)")
	flag.Parse()
	listener, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcgo_server:", err)
		os.Exit(1)
	}
	server := grpc.NewServer(grpc.CustomCodec(rawCodec{}), grpc.UnknownServiceHandler(handle),
		grpc.MaxRecvMsgSize(64<<20), grpc.MaxSendMsgSize(64<<20))
	fmt.Println(listener.Addr().String())
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, "grpcgo_server:", err)
		os.Exit(1)
	}
}
