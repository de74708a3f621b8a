// Command flashsale runs the flash-sale demo's buyers (examples/flashsale) in rounds, with a
// redissonprom.Collector on their Clients, and serves the metrics at /metrics for Prometheus (and
// the Grafana dashboard in ../../grafana).
//
//	go run ./example/flashsale                      # throwaway redis-server, rounds until Ctrl-C
//	go run ./example/flashsale -rounds 3            # three rounds, then exit
//	go run ./example/flashsale -addr HOST:PORT -listen 127.0.0.1:2112
//	curl -s 127.0.0.1:2112/metrics | grep redisson_
//
// Each round seeds a stock, then -buyers buyers, spread over -clients redisson Clients (standing for
// processes), race to buy it, each holding the lock around a read-modify-write of the stock; the
// round prints one line and fails the program if an item was oversold.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/contrib/redissonprom"
	"github.com/goredisson/redisson/examples/flashsale/sale"
	"github.com/goredisson/redisson/redistest"
)

// config is what the program does.
type config struct {
	Addr    string        // existing Redis; "" starts a throwaway redis-server
	Listen  string        // address of the /metrics server
	Clients int           // redisson Clients, each watched by the Collector
	Buyers  int           // buyers per round, spread over the Clients
	Stock   int           // items per round
	Rounds  int           // rounds; 0: until interrupted
	Pause   time.Duration // between rounds

	// served, if set (tests), is called with the /metrics URL after the last round, before the
	// server stops.
	served func(url string)
}

func main() {
	os.Exit(mainStatus(os.Args[1:], os.Stdout, os.Stderr))
}

func mainStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flashsale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.Addr, "addr", "", "address of an existing Redis (default: start a throwaway redis-server)")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:2112", "address to serve /metrics on")
	fs.IntVar(&cfg.Clients, "clients", 4, "redisson Clients (standing for processes)")
	fs.IntVar(&cfg.Buyers, "buyers", 200, "buyers per round, spread over the clients")
	fs.IntVar(&cfg.Stock, "stock", 50, "items per round")
	fs.IntVar(&cfg.Rounds, "rounds", 0, "rounds to sell (0: until interrupted)")
	fs.DurationVar(&cfg.Pause, "pause", time.Second, "pause between rounds")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "flashsale: unexpected arguments %q\n", fs.Args())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "flashsale:", err)
		return 1
	}
	return 0
}

// run serves /metrics and sells rounds until cfg.Rounds are done or ctx ends (which is not an
// error). It returns an error if a round oversold or could not be held.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	if cfg.Clients < 1 || cfg.Buyers < 1 || cfg.Stock < 0 || cfg.Rounds < 0 {
		return errors.New("need -clients >= 1, -buyers >= 1, -stock >= 0 and -rounds >= 0")
	}
	addr := cfg.Addr
	if addr == "" {
		srv, err := redistest.StartProcess()
		if err != nil {
			return fmt.Errorf("starting redis-server: %w", err)
		}
		defer srv.Close()
		addr = srv.Addr()
		fmt.Fprintf(stdout, "started a throwaway redis-server at %s\n", addr)
	}

	col := redissonprom.NewCollector()
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, collectors.NewGoCollector())

	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, PoolSize: 64})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", addr, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	prefix := "flashsale:" + randomHex(6) + ":" // keys of this run, apart from other runs on a shared Redis
	sales := make([]*sale.Sale, cfg.Clients)
	for i := range sales {
		c, err := redisson.New(rdb, redisson.WithKeyPrefix(prefix), redisson.WithLogger(logger), redisson.WithEventHook(col.Hook()))
		if err != nil {
			return err
		}
		defer c.Close()
		unwatch, err := col.Watch(c, "client-"+strconv.Itoa(i))
		if err != nil {
			return err
		}
		defer unwatch()
		sales[i] = &sale.Sale{Rdb: rdb, Lock: c.Lock(sale.LockName), StockKey: sale.StockKey(prefix), SoldKey: sale.SoldKey(prefix)}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		rdb.Del(cctx, sale.StockKey(prefix), sale.SoldKey(prefix))
	}()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		hs.Shutdown(cctx)
		<-served
	}()
	url := "http://" + ln.Addr().String() + "/metrics"
	fmt.Fprintf(stdout, "serving %s; %d buyers in %d clients race for %d items a round (Ctrl-C to stop)\n",
		url, cfg.Buyers, cfg.Clients, cfg.Stock)

	for round := 1; cfg.Rounds == 0 || round <= cfg.Rounds; round++ {
		if ctx.Err() != nil {
			return nil
		}
		if err := sellRound(ctx, cfg, rdb, sales, prefix, round, stdout); err != nil {
			if ctx.Err() != nil {
				return nil // interrupted mid-round
			}
			return err
		}
		if cfg.Rounds == 0 || round < cfg.Rounds {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(cfg.Pause):
			}
		}
	}
	if cfg.served != nil {
		cfg.served(url)
	}
	return nil
}

// sellRound seeds the stock and runs one round's buyers, printing one line; it fails if an item was
// oversold, a buyer failed, or the stock was not sold out.
func sellRound(ctx context.Context, cfg config, rdb *redis.Client, sales []*sale.Sale, prefix string, round int, stdout io.Writer) error {
	if err := rdb.MSet(ctx, sale.StockKey(prefix), cfg.Stock, sale.SoldKey(prefix), 0).Err(); err != nil {
		return fmt.Errorf("seeding the stock: %w", err)
	}
	start := time.Now()
	records := make([]sale.Record, cfg.Buyers)
	var wg sync.WaitGroup
	for i := range records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			records[i] = sales[i%len(sales)].Buy(ctx, i)
		}()
	}
	wg.Wait()
	sold, oversold := 0, 0
	var waits []time.Duration
	for _, r := range records {
		if r.Err != "" {
			return fmt.Errorf("round %d: buyer %d: %s", round, r.Buyer, r.Err)
		}
		waits = append(waits, time.Duration(r.WaitNs))
		if r.Bought {
			sold++
			if r.Seq > int64(cfg.Stock) {
				oversold++
			}
		}
	}
	slices.Sort(waits)
	p99 := waits[min(len(waits)-1, len(waits)*99/100)]
	fmt.Fprintf(stdout, "round %d: sold %d of %d items to %d buyers in %v, oversold %d, wait p99 %v\n",
		round, sold, cfg.Stock, cfg.Buyers, time.Since(start).Round(time.Millisecond), oversold, p99.Round(10*time.Microsecond))
	if want := min(cfg.Stock, cfg.Buyers); oversold > 0 || sold != want {
		return fmt.Errorf("round %d: sold %d (want %d), oversold %d", round, sold, want, oversold)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
