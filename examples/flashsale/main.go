// Command flashsale races many buyers in several OS processes for a small stock of items, each buyer
// guarding its read-modify-write of the stock with a redisson Lock, and checks that nothing was
// oversold. With -nolock the buyers skip the lock, to show the overselling the lock prevents.
//
//	go run ./examples/flashsale              # throwaway redis-server, 4 processes, 1000 buyers, 100 items
//	go run ./examples/flashsale -nolock      # the same without the lock: oversells
//	go run ./examples/flashsale -compare     # both, one after the other, side by side (make demo)
//	go run ./examples/flashsale -addr HOST:PORT
//
// The parent seeds the stock in Redis, re-executes its own binary as worker processes, starts them at
// once and collects one record per buyer from their standard output. It ends by printing one line:
//
//	RESULT sold=100 oversold=0 buyers=1000 processes=4 wait_p50=1.2ms wait_p99=35ms
//
// wait_* are percentiles over all buyers of the time from the Lock call to the acquisition (0 with
// -nolock). The exit status is 0 when, with the lock, every item was sold exactly once (or, with
// -nolock, when the run completed); 1 otherwise. -compare runs the sale without the lock, then with
// it, and prints the two outcomes as a small table; its status is the locked run's.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/examples/flashsale/sale"
	"github.com/goredisson/redisson/redistest"
)

// workerEnv marks a re-executed copy of the program as a worker.
const workerEnv = "FLASHSALE_WORKER"

// lockName is the lock every buyer takes (see package sale).
const lockName = sale.LockName

// config is what one sale looks like.
type config struct {
	Processes int           // worker processes
	Buyers    int           // buyers in total, spread over the processes
	Stock     int           // items for sale
	NoLock    bool          // buyers skip the lock
	Addr      string        // existing Redis; "" starts a throwaway redis-server
	Timeout   time.Duration // bound on the whole sale
}

// result is what a sale produced.
type result struct {
	Sold       int   // successful purchases
	Oversold   int   // purchases beyond the initial stock
	Buyers     int   // buyers that reported
	Processes  int   // worker processes
	FinalStock int64 // stock left in Redis
	Lost       int64 // purchases whose decrement of the stock a racing SET overwrote
	WaitP50    time.Duration
	WaitP99    time.Duration
	Elapsed    time.Duration
	Line       string // the RESULT line
}

func main() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(parentMain(os.Args[1:], os.Stdout, os.Stderr))
}

// parentMain parses the flags, runs the sale and returns the exit status.
func parentMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flashsale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.IntVar(&cfg.Processes, "processes", 4, "worker processes")
	fs.IntVar(&cfg.Buyers, "buyers", 1000, "buyers in total, spread over the processes")
	fs.IntVar(&cfg.Stock, "stock", 100, "items for sale")
	fs.BoolVar(&cfg.NoLock, "nolock", false, "buyers skip the lock (shows the overselling it prevents)")
	compare := fs.Bool("compare", false, "run the sale without the lock, then with it, and print both outcomes side by side")
	fs.StringVar(&cfg.Addr, "addr", "", "address of an existing Redis (default: start a throwaway redis-server)")
	fs.DurationVar(&cfg.Timeout, "timeout", time.Minute, "give up (and kill the workers) after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "flashsale: unexpected arguments %q\n", fs.Args())
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *compare {
		return compareMain(ctx, cfg, stdout, stderr)
	}
	res, err := run(ctx, cfg, stdout, stderr)
	if err != nil {
		if res == nil {
			fmt.Fprintln(stderr, "flashsale:", err)
		}
		return 1
	}
	return 0
}

// compareMain runs the sale without the lock and then with it, and prints both outcomes side by
// side; each run's own report is printed only if it fails. It returns the locked run's exit status.
func compareMain(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "flash sale: %d items, %d buyers in %d processes, each buyer GET stock ... SET stock-1\n",
		cfg.Stock, cfg.Buyers, cfg.Processes)
	fmt.Fprintf(stdout, "%-17s %5s %9s %13s %9s\n", "", "sold", "oversold", "lost updates", "wait p99")
	status := 0
	for _, nolock := range []bool{true, false} {
		c := cfg
		c.NoLock = nolock
		var out strings.Builder
		res, err := run(ctx, c, &out, stderr)
		label := "with the lock"
		if nolock {
			label = "without the lock"
		}
		if res == nil || err != nil && !nolock {
			fmt.Fprint(stdout, out.String())
			if res == nil {
				fmt.Fprintln(stderr, "flashsale:", err)
			}
			status = 1
			continue
		}
		wait := "-" // the buyers did not wait for anything
		if !nolock {
			wait = compact(res.WaitP99).String()
		}
		fmt.Fprintf(stdout, "%-17s %5d %9d %13d %9s\n", label, res.Sold, res.Oversold, res.Lost, wait)
	}
	if status == 0 {
		fmt.Fprintln(stdout, "with the lock: every item sold exactly once, no update lost")
	}
	return status
}

// errSale reports a sale that completed but broke its promise (oversold, or not sold out with the
// lock). The RESULT line has been printed.
var errSale = errors.New("sale check failed")

// run holds one sale and prints progress and, once every worker has reported, the RESULT line to
// stdout. It returns a nil result if the sale could not be completed; otherwise the RESULT line has
// been printed, and err is non-nil (matching errSale, or describing buyer errors) if the sale failed.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) (*result, error) {
	if cfg.Processes < 1 || cfg.Buyers < 1 || cfg.Stock < 0 {
		return nil, fmt.Errorf("need -processes >= 1, -buyers >= 1 and -stock >= 0")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	stderr = &lockedWriter{w: stderr}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	addr := cfg.Addr
	if addr == "" {
		srv, err := redistest.StartProcess()
		if err != nil {
			return nil, fmt.Errorf("starting redis-server: %w", err)
		}
		defer srv.Close()
		addr = srv.Addr()
		fmt.Fprintf(stdout, "started a throwaway redis-server at %s\n", addr)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis at %s: %w", addr, err)
	}

	// Every key of this run lives under a fresh prefix, so that runs against a shared Redis (-addr)
	// do not meet. The workers pass it to redisson.WithKeyPrefix, so the lock itself is still
	// c.Lock("goods:1000").
	prefix := "flashsale:" + randomHex(6) + ":"
	stockKey, soldKey := sale.StockKey(prefix), sale.SoldKey(prefix)
	if err := rdb.MSet(ctx, stockKey, cfg.Stock, soldKey, 0).Err(); err != nil {
		return nil, fmt.Errorf("seeding the stock: %w", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer ccancel()
		// The lock and its queue are gone once every buyer has unlocked.
		rdb.Del(cctx, stockKey, soldKey)
	}()

	mode := "each buyer holds lock " + strconv.Quote(lockName) + " around GET stock ... SET stock-1"
	if cfg.NoLock {
		mode = "NO LOCK: buyers GET stock ... SET stock-1 unprotected"
	}
	fmt.Fprintf(stdout, "flash sale: %d items, %d buyers in %d processes; %s\n",
		cfg.Stock, cfg.Buyers, cfg.Processes, mode)

	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	workers := make([]*workerProc, cfg.Processes)
	ready := make(chan int, cfg.Processes)
	exited := make(chan int, cfg.Processes)
	var wg sync.WaitGroup
	// Whatever happens, no worker outlives run: cancel kills those still running, and run waits.
	defer func() {
		cancel()
		wg.Wait()
	}()
	first := 0
	for i := range workers {
		n := cfg.Buyers / cfg.Processes
		if i < cfg.Buyers%cfg.Processes {
			n++
		}
		w := &workerProc{id: i, buyers: n}
		workers[i] = w
		args := []string{"-addr", addr, "-prefix", prefix, "-proc", strconv.Itoa(i),
			"-first", strconv.Itoa(first), "-buyers", strconv.Itoa(n)}
		if cfg.NoLock {
			args = append(args, "-nolock")
		}
		first += n
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), workerEnv+"=1")
		cmd.Stderr = stderr
		cmd.SysProcAttr = sysProcAttr() // killed if this process dies (Linux)
		cmd.WaitDelay = 5 * time.Second
		if w.stdin, err = cmd.StdinPipe(); err != nil { // and exits when its stdin closes
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting worker %d: %w", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.read(out, ready)
			w.waitErr = cmd.Wait()
			exited <- w.id
		}()
	}

	// Start every buyer at once, when all workers are connected.
	for n := 0; n < len(workers); {
		select {
		case <-ready:
			n++
		case i := <-exited:
			return nil, fmt.Errorf("worker %d exited before it was ready: %v", i, workers[i].failure())
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the workers to start: %w", context.Cause(ctx))
		}
	}
	start := time.Now()
	for _, w := range workers {
		if _, err := io.WriteString(w.stdin, "go\n"); err != nil {
			return nil, fmt.Errorf("starting worker %d: %w", w.id, err)
		}
	}
	fmt.Fprintf(stdout, "%d workers ready; go!\n", len(workers))

	for range workers {
		select {
		case i := <-exited:
			if err := workers[i].failure(); err != nil {
				return nil, fmt.Errorf("worker %d: %w", i, err)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("sale did not finish: %w", context.Cause(ctx))
		}
	}
	var elapsed time.Duration // until the last buyer reported (not until the processes exited)
	for _, w := range workers {
		elapsed = max(elapsed, w.doneAt.Sub(start))
	}

	// Tally the per-buyer records.
	res := &result{Processes: cfg.Processes, Elapsed: elapsed}
	var waits []time.Duration
	var buyerErrs []string
	gaveUp := 0
	seen := make(map[int]bool, cfg.Buyers)
	for _, w := range workers {
		for _, r := range w.records {
			if seen[r.Buyer] {
				return nil, fmt.Errorf("buyer %d reported twice", r.Buyer)
			}
			seen[r.Buyer] = true
			res.Buyers++
			waits = append(waits, time.Duration(r.WaitNs))
			if r.Err != "" {
				buyerErrs = append(buyerErrs, fmt.Sprintf("buyer %d: %s", r.Buyer, r.Err))
			} else if !r.Bought {
				gaveUp++
			}
			if r.Bought {
				res.Sold++
				// The sold counter is INCRed atomically, so its replies number the purchases 1, 2, ...:
				// every number above the initial stock is an item that did not exist.
				if r.Seq > int64(cfg.Stock) {
					res.Oversold++
				}
			}
		}
	}
	if res.Buyers != cfg.Buyers {
		return nil, fmt.Errorf("%d of %d buyers reported", res.Buyers, cfg.Buyers)
	}
	res.WaitP50, res.WaitP99 = percentile(waits, 0.50), percentile(waits, 0.99)

	// Cross-check with Redis.
	vals, err := rdb.MGet(ctx, stockKey, soldKey).Result()
	if err != nil {
		return nil, fmt.Errorf("reading the final stock: %w", err)
	}
	res.FinalStock, _ = strconv.ParseInt(fmt.Sprint(vals[0]), 10, 64)
	counter, _ := strconv.Atoi(fmt.Sprint(vals[1]))
	var fails []string
	if counter != res.Sold {
		fails = append(fails, fmt.Sprintf("sold counter in Redis is %d but %d purchases were reported", counter, res.Sold))
	}
	// Purchases whose decrement of the stock was overwritten by a racing SET.
	lost := int64(res.Sold) - (int64(cfg.Stock) - res.FinalStock)
	res.Lost = lost
	fmt.Fprintf(stdout, "done in %v: %d purchases, stock left in Redis %d (lost updates %d), %d buyers found it sold out\n",
		compact(elapsed), res.Sold, res.FinalStock, lost, gaveUp)
	if len(buyerErrs) > 0 {
		for i, e := range buyerErrs {
			if i == 5 {
				fmt.Fprintf(stderr, "... and %d more buyer errors\n", len(buyerErrs)-5)
				break
			}
			fmt.Fprintln(stderr, e)
		}
		fails = append(fails, fmt.Sprintf("%d buyers failed", len(buyerErrs)))
	}
	if !cfg.NoLock {
		if want := min(cfg.Stock, cfg.Buyers); res.Sold != want {
			fails = append(fails, fmt.Sprintf("sold %d items, want %d", res.Sold, want))
		}
		if res.Oversold != 0 {
			fails = append(fails, fmt.Sprintf("oversold %d items WITH the lock", res.Oversold))
		}
		if lost != 0 {
			fails = append(fails, fmt.Sprintf("%d stock updates were lost WITH the lock", lost))
		}
	} else if res.Oversold > 0 {
		fmt.Fprintf(stdout, "without the lock %d buyers bought items that did not exist (run without -nolock to fix)\n", res.Oversold)
	} else {
		fmt.Fprintln(stdout, "without the lock nothing was oversold this time (the race is timing-dependent)")
	}
	for _, f := range fails {
		fmt.Fprintln(stdout, "FAIL:", f)
	}

	res.Line = fmt.Sprintf("RESULT sold=%d oversold=%d buyers=%d processes=%d wait_p50=%v wait_p99=%v",
		res.Sold, res.Oversold, res.Buyers, res.Processes, compact(res.WaitP50), compact(res.WaitP99))
	fmt.Fprintln(stdout, res.Line)
	if len(fails) > 0 {
		return res, fmt.Errorf("%w: %s", errSale, strings.Join(fails, "; "))
	}
	return res, nil
}

// workerProc is the parent's view of one worker process.
type workerProc struct {
	id      int
	buyers  int
	stdin   io.WriteCloser
	records []record // written by read before the exit is signalled
	done    bool     // the worker reported it finished
	doneAt  time.Time
	badLine string // first line that could not be parsed
	waitErr error
}

// read collects the worker's messages until its stdout closes, signalling ready once.
func (w *workerProc) read(out io.Reader, ready chan<- int) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			if w.badLine == "" {
				w.badLine = sc.Text()
			}
			continue
		}
		switch {
		case m.Ready:
			ready <- w.id
		case m.Done:
			w.done, w.doneAt = true, time.Now()
		case m.Record != nil:
			w.records = append(w.records, *m.Record)
		}
	}
	io.Copy(io.Discard, out)
}

// failure says what went wrong with a worker that has exited, or nil.
func (w *workerProc) failure() error {
	switch {
	case w.waitErr != nil:
		return fmt.Errorf("exited: %w", w.waitErr)
	case w.badLine != "":
		return fmt.Errorf("unexpected output %q", w.badLine)
	case !w.done:
		return errors.New("exited without finishing")
	case len(w.records) != w.buyers:
		return fmt.Errorf("reported %d of %d buyers", len(w.records), w.buyers)
	}
	return nil
}

// percentile returns the nearest-rank p-quantile of ds (which it sorts).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// compact rounds d for display: to 10µs below a second, to 1ms above.
func compact(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lockedWriter serialises writes from several goroutines (the copiers of the workers' stderr).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
