package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/examples/flashsale/sale"
)

// record is what one buyer did.
type record = sale.Record

// message is one line a worker writes to its stdout for the parent.
type message struct {
	Ready  bool    `json:"ready,omitempty"` // connected; waiting for "go" on stdin
	Done   bool    `json:"done,omitempty"`  // every buyer has reported
	Record *record `json:"record,omitempty"`
}

// workerMain runs one worker process: its buyers start when the parent writes "go" to stdin, and each
// reports a record on stdout. The worker exits if its stdin closes early (the parent is gone).
func workerMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flashsale-worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "Redis address")
	prefix := fs.String("prefix", "", "key prefix of this run")
	proc := fs.Int("proc", 0, "worker number")
	first := fs.Int("first", 0, "number of the first buyer")
	buyers := fs.Int("buyers", 0, "buyers in this process")
	nolock := fs.Bool("nolock", false, "skip the lock")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "flashsale worker %d: %s\n", *proc, fmt.Sprintf(format, a...))
		return 1
	}

	rdb := redis.NewClient(&redis.Options{Addr: *addr, ContextTimeoutEnabled: true, PoolSize: 64})
	defer rdb.Close()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := redisson.New(rdb, redisson.WithKeyPrefix(*prefix), redisson.WithLogger(logger))
	if err != nil {
		return fail("%v", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fail("redis at %s: %v", *addr, err)
	}

	var mu sync.Mutex
	bw := bufio.NewWriter(stdout)
	enc := json.NewEncoder(bw)
	send := func(m message, flush bool) error {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(m); err != nil {
			return err
		}
		if flush {
			return bw.Flush()
		}
		return nil
	}
	if err := send(message{Ready: true}, true); err != nil {
		return fail("%v", err)
	}
	in := bufio.NewReader(stdin)
	if line, err := in.ReadString('\n'); strings.TrimSpace(line) != "go" {
		return fail("expected \"go\" on stdin, got %q (%v)", line, err)
	}
	go func() { // the parent holds stdin open until this process exits
		io.Copy(io.Discard, in)
		fmt.Fprintf(stderr, "flashsale worker %d: parent gone, exiting\n", *proc)
		os.Exit(3)
	}()

	s := sale.Sale{
		Rdb:      rdb,
		Lock:     c.Lock(lockName),
		StockKey: sale.StockKey(*prefix),
		SoldKey:  sale.SoldKey(*prefix),
		NoLock:   *nolock,
	}
	var wg sync.WaitGroup
	for i := range *buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Buy(ctx, *first+i)
			send(message{Record: &r}, false)
		}()
	}
	wg.Wait()
	if err := send(message{Done: true}, true); err != nil {
		return fail("%v", err)
	}
	return 0
}
