package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// record is what one buyer did.
type record struct {
	Buyer  int    `json:"buyer"`
	WaitNs int64  `json:"wait_ns"`          // from the Lock call to the acquisition; 0 with -nolock
	Seen   int64  `json:"seen"`             // the stock the buyer read
	Bought bool   `json:"bought,omitempty"` // it wrote stock-1 and counted a sale
	Seq    int64  `json:"seq,omitempty"`    // the sold counter's INCR reply: this purchase's number
	Err    string `json:"err,omitempty"`
}

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

	s := sale{
		rdb:      rdb,
		lock:     c.Lock(lockName),
		stockKey: *prefix + goodsKey + ":stock",
		soldKey:  *prefix + goodsKey + ":sold",
		nolock:   *nolock,
	}
	var wg sync.WaitGroup
	for i := range *buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.buy(ctx, *first+i)
			send(message{Record: &r}, false)
		}()
	}
	wg.Wait()
	if err := send(message{Done: true}, true); err != nil {
		return fail("%v", err)
	}
	return 0
}

// sale is what the buyers of one process share.
type sale struct {
	rdb               *redis.Client
	lock              *redisson.Lock
	stockKey, soldKey string
	nolock            bool
}

// buy is one buyer: lock, read the stock, and if there is any, take a moment (payment, say), write
// the stock back less one and count the sale; unlock. The read-modify-write is deliberately not
// atomic: only the lock keeps two buyers from selling the same item.
func (s *sale) buy(ctx context.Context, id int) (r record) {
	r.Buyer = id
	lctx := ctx
	if !s.nolock {
		start := time.Now()
		owned, err := s.lock.Lock(ctx)
		r.WaitNs = int64(time.Since(start))
		if err != nil {
			r.Err = "lock: " + err.Error()
			return r
		}
		lctx = owned.Context()
		defer func() {
			if err := owned.Unlock(ctx); err != nil {
				r.Err = errors.Join(errorOf(r.Err), fmt.Errorf("unlock: %w", err)).Error()
			}
		}()
	}
	// Redis calls use the hold's context: it is cancelled if the lock is lost.
	stock, err := s.rdb.Get(lctx, s.stockKey).Int64()
	if err != nil {
		r.Err = "get stock: " + err.Error()
		return r
	}
	r.Seen = stock
	if stock <= 0 {
		return r // sold out: give up
	}
	time.Sleep(rand.N(time.Millisecond))
	if err := s.rdb.Set(lctx, s.stockKey, stock-1, 0).Err(); err != nil {
		r.Err = "set stock: " + err.Error()
		return r
	}
	seq, err := s.rdb.Incr(lctx, s.soldKey).Result()
	if err != nil {
		r.Err = "count sale: " + err.Error()
		return r
	}
	r.Bought, r.Seq = true, seq
	return r
}

func errorOf(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}
