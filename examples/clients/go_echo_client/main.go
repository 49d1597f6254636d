// A Go gRPC client for rpcscope's A/B runs (docs/client-protocol.md): grpc-go calling Bench/Echo with a bytes
// payload, under rpcscope's client protocol. No generated code: the EchoRequest is written by hand (field 1,
// bytes), and a raw codec hands it to grpc-go as it is.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o go_echo_client .   (Debian's golang-google-grpc-dev)
//	rpcscope-cli ab --a builtin --b builtin --a-client './go_echo_client' --b-client './go_echo_client.new' ...
//
// The target is $RPCSCOPE_TARGET (or -target HOST:PORT). Blocks come on stdin, one JSON line each; every call is
// reported on stdout as {"latency_ns": N, "ok": true|false, ...}, then {"done": BLOCK}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
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

func (rawCodec) Name() string { return "proto" }

// echoRequest is EchoRequest{payload: size bytes} on the wire: tag 0x0a, the length as a varint, the bytes.
func echoRequest(size int) []byte {
	out := []byte{0x0a}
	for n := uint64(size); ; n >>= 7 {
		if n < 0x80 {
			out = append(out, byte(n))
			break
		}
		out = append(out, byte(n)|0x80)
	}
	return append(out, make([]byte, size)...)
}

// block is what rpcscope asks for: a number of calls (or a duration), how many at once, and warm-up calls first.
type block struct {
	Block       int   `json:"block"`
	Calls       int64 `json:"calls"`
	DurationMs  int64 `json:"duration_ms"`
	Concurrency int   `json:"concurrency"`
	WarmupCalls int64 `json:"warmup_calls"`
}

// reporter writes call lines in batches, from any goroutine.
type reporter struct {
	mu  sync.Mutex
	out *bufio.Writer
	at  time.Time
}

func (r *reporter) line(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.WriteString(s)
	if r.out.Buffered() > 32<<10 || time.Since(r.at) > 50*time.Millisecond {
		r.out.Flush()
		r.at = time.Now()
	}
}

func (r *reporter) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Flush()
	r.at = time.Now()
}

func main() {
	target := flag.String("target", os.Getenv("RPCSCOPE_TARGET"), "HOST:PORT")
	size := flag.Int("payload-bytes", 2, "the request's bytes field")
	flag.Parse()
	rep := &reporter{out: bufio.NewWriterSize(os.Stdout, 64<<10), at: time.Now()}
	fatal := func(why string) {
		text, _ := json.Marshal(why)
		rep.line(fmt.Sprintf("{\"fatal\": %s}\n", text))
		rep.flush()
		os.Exit(1)
	}
	if *target == "" {
		fatal("no target: -target HOST:PORT, or run it from rpcscope")
	}
	dialing, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	conn, err := grpc.DialContext(dialing, *target, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	cancel()
	if err != nil {
		fatal("cannot connect to " + *target + ": " + err.Error())
	}
	defer conn.Close()
	rep.line("{\"ready\": true}\n") // connected: rpcscope may send the first block
	rep.flush()
	request := echoRequest(*size)
	call := func(warmup bool) {
		var reply []byte
		start := time.Now()
		err := conn.Invoke(context.Background(), "/rpcscope.bench.v1.Bench/Echo", &request, &reply)
		ns := time.Since(start).Nanoseconds()
		suffix := ""
		if warmup {
			suffix = ", \"warmup\": true"
		}
		if err != nil {
			text, _ := json.Marshal(err.Error())
			rep.line(fmt.Sprintf("{\"latency_ns\": %d, \"ok\": false, \"status\": \"%s\", \"error\": %s%s}\n", ns,
				status.Code(err).String(), text, suffix))
			return
		}
		rep.line(fmt.Sprintf("{\"latency_ns\": %d, \"ok\": true, \"bytes_sent\": %d, \"bytes_received\": %d%s}\n",
			ns, len(request), len(reply), suffix))
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var b block
		if err := json.Unmarshal(in.Bytes(), &b); err != nil {
			fatal("a block line that is not JSON: " + err.Error())
		}
		for i := int64(0); i < b.WarmupCalls; i++ {
			call(true)
		}
		left := b.Calls
		deadline := time.Now().Add(time.Duration(b.DurationMs) * time.Millisecond)
		take := func() bool {
			if b.Calls == 0 {
				return time.Now().Before(deadline)
			}
			return atomic.AddInt64(&left, -1) >= 0
		}
		var callers sync.WaitGroup
		for c := 0; c < b.Concurrency || c == 0; c++ {
			callers.Add(1)
			go func() {
				defer callers.Done()
				for take() {
					call(false)
				}
			}()
		}
		callers.Wait()
		rep.line(fmt.Sprintf("{\"done\": %d}\n", b.Block))
		rep.flush()
	}
}
