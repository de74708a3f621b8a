// Command bench compares this library's distributed lock with other Go Redis locks, side by side,
// against one throwaway redis-server it starts itself. See README.md.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/redistest"
)

type config struct {
	duration     time.Duration
	contDuration time.Duration
	goroutines   int
	critical     time.Duration
	poll         time.Duration
	only         []string
	json         bool
	holdLocks    int
	holdWatchdog time.Duration
	holdPeriods  int
	holdCluster  bool
	trackCost    bool
	trackOnly    bool
	rw           bool
	rwReads      float64
	rwOnly       bool
	sem          bool
	semOnly      bool
	obj          bool
	objOnly      bool
	multi        bool
	multiOnly    bool
	rounds       int
	cpuProfile   string
	scenarios    string // -scenarios: the lock scenarios to run, comma-separated ("": all)
	clients      []int  // Clients of the per-Client contended scenarios (contended-<n>c)
	charts       string // directory of the SVG charts; "" for none
	fromJSON     string // print the report and write the charts of this -json output instead of running
}

// report is everything one run measured.
type report struct {
	Started     time.Time          `json:"started"`
	GoVersion   string             `json:"go_version"`
	GOMAXPROCS  int                `json:"gomaxprocs"`
	Redis       string             `json:"redis_version"`
	Config      map[string]string  `json:"config"`
	Settings    map[string]string  `json:"settings"`
	Uncontended []*scenarioResult  `json:"uncontended"`
	Contended   []*scenarioResult  `json:"contended"`
	Hold        *holdResult        `json:"hold,omitempty"`
	ClusterHold *clusterHoldResult `json:"cluster_hold,omitempty"`
	RW          *rwResult          `json:"rw_read_heavy,omitempty"`
	Sem         *semResult         `json:"semaphore,omitempty"`
	Obj         *objResult         `json:"objects,omitempty"`
	Multi       *multiResult       `json:"multilock_order,omitempty"`
	TrackCost   []trackCostRow     `json:"track_cost,omitempty"`
	HoldError   string             `json:"hold_error,omitempty"`
	Ratios      []ratio            `json:"ratios"`
	Failures    []string           `json:"failures,omitempty"`
	Goroutines  int                `json:"goroutines_left_at_end"` // beyond those at start
	TotalSecs   float64            `json:"total_seconds"`
}

func main() {
	var cfg config
	var only string
	flag.DurationVar(&cfg.duration, "duration", 3*time.Second, "length of the uncontended scenario, per implementation")
	flag.DurationVar(&cfg.contDuration, "contended-duration", 4*time.Second, "length of each contended scenario, per implementation")
	flag.IntVar(&cfg.goroutines, "goroutines", 16, "goroutines of the uncontended and contended scenarios (the contended-<n>c ones have n: see -clients)")
	flag.DurationVar(&cfg.critical, "critical", time.Millisecond, "critical section (time.Sleep) in the contended scenario")
	flag.DurationVar(&cfg.poll, "poll", time.Millisecond, "retry sleep of the polling locks: floor, and redislock's LinearBackoff")
	flag.StringVar(&only, "only", "", "comma-separated implementations to run (default: all but opt-in ones): "+implNames())
	flag.BoolVar(&cfg.json, "json", false, "print one JSON document instead of the markdown report")
	flag.IntVar(&cfg.holdLocks, "hold-locks", 10000, "locks held at once in the watchdog test of this library (0: skip)")
	flag.DurationVar(&cfg.holdWatchdog, "hold-watchdog", 3*time.Second, "watchdog timeout in the hold test (renewal every third)")
	flag.IntVar(&cfg.holdPeriods, "hold-intervals", 4, "renewal intervals observed in the hold test")
	flag.BoolVar(&cfg.holdCluster, "hold-cluster", true, "also run the hold test on a redistest Cluster (3 masters + 3 replicas)")
	flag.BoolVar(&cfg.trackCost, "track-cost", true, "also measure what 1 and -hold-locks held locks cost in Redis and in the client, loss tracking off and on")
	flag.BoolVar(&cfg.trackOnly, "track-cost-only", false, "run the tracking cost scenario only")
	flag.BoolVar(&cfg.rw, "rw", true, "also run the read-heavy ReadWriteLock scenario (16 Clients, -rw-reads reads) against the Lock")
	flag.Float64Var(&cfg.rwReads, "rw-reads", 0.9, "share of reads in the ReadWriteLock scenario")
	flag.BoolVar(&cfg.rwOnly, "rw-only", false, "run the read-heavy ReadWriteLock scenario only")
	flag.BoolVar(&cfg.sem, "sem", true, "also run the Semaphore scenario (1 Client uncontended; 16 and 64 Clients on 4 permits against 4 Locks)")
	flag.BoolVar(&cfg.semOnly, "sem-only", false, "run the Semaphore scenario only")
	flag.BoolVar(&cfg.obj, "obj", true, "also run the data objects scenario (AtomicLong, BloomFilter against raw go-redis)")
	flag.BoolVar(&cfg.objOnly, "obj-only", false, "run the data objects scenario only")
	flag.BoolVar(&cfg.multi, "multi", true, "also run the MultiLock order scenario (2 groups over 2 Locks on 2 servers, same vs opposite order, -contended-duration per order)")
	flag.BoolVar(&cfg.multiOnly, "multi-only", false, "run the MultiLock order scenario only")
	flag.IntVar(&cfg.rounds, "rounds", 2, "repeat the scenarios of all implementations this many times (order rotated each round) and pool the results")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.StringVar(&cfg.scenarios, "scenarios", "", "comma-separated lock scenarios to run (default: all): uncontended, contended, contended-<n>c (for -cpuprofile of one)")
	clients := flag.String("clients", "1,4,16,64", "comma-separated numbers of Clients of the per-Client contended scenarios (contended-<n>c: n goroutines, each with its own Client, as n processes)")
	flag.StringVar(&cfg.charts, "charts", "charts", "directory to write the SVG charts into (created if missing; \"\": no charts)")
	flag.StringVar(&cfg.fromJSON, "from-json", "", "run nothing: read the report of an earlier -json run from this file, print it (markdown, or JSON with -json) and write its charts")
	flag.Parse()
	for _, s := range strings.Split(*clients, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || slices.Contains(cfg.clients, n) {
			fmt.Fprintf(os.Stderr, "bench: -clients: %q is not a new positive number\n", s)
			os.Exit(2)
		}
		cfg.clients = append(cfg.clients, n)
	}
	if only != "" {
		for _, s := range strings.Split(only, ",") {
			if s = strings.TrimSpace(s); s != "" {
				cfg.only = append(cfg.only, s)
			}
		}
	}
	if cfg.goroutines < 1 || cfg.duration <= 0 || cfg.contDuration <= 0 || cfg.poll <= 0 || cfg.holdPeriods < 1 || cfg.rounds < 1 {
		fmt.Fprintln(os.Stderr, "bench: -goroutines, -duration, -contended-duration, -poll, -rounds and -hold-intervals must be positive")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if cfg.fromJSON != "" {
		err = fromJSON(&cfg)
	} else {
		err = run(ctx, &cfg)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func implNames() string {
	var names []string
	for _, im := range allImpls() {
		n := im.name
		if im.optIn {
			n += " (opt-in)"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

func selected(cfg *config) ([]impl, error) {
	all := allImpls()
	if len(cfg.only) == 0 {
		return slices.DeleteFunc(all, func(im impl) bool { return im.optIn }), nil
	}
	var out []impl
	for _, name := range cfg.only {
		i := slices.IndexFunc(all, func(im impl) bool { return im.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown implementation %q (known: %s)", name, implNames())
		}
		out = append(out, all[i])
	}
	return out, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

func run(ctx context.Context, cfg *config) (err error) {
	impls, err := selected(cfg)
	if err != nil {
		return err
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep := &report{
		Started: time.Now(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Settings: map[string]string{},
		Config: map[string]string{
			"duration": cfg.duration.String(), "contended_duration": cfg.contDuration.String(),
			"goroutines": fmt.Sprint(cfg.goroutines), "critical": cfg.critical.String(), "poll": cfg.poll.String(),
			"hold_locks": fmt.Sprint(cfg.holdLocks), "hold_watchdog": cfg.holdWatchdog.String(),
			"hold_intervals": fmt.Sprint(cfg.holdPeriods), "rounds": fmt.Sprint(cfg.rounds),
			"clients": fmt.Sprint(cfg.clients),
		},
	}

	srv, err := redistest.StartProcess()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := srv.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("stopping redis-server: %w", cerr))
		}
	}()
	addr := srv.Addr()
	logf("redis-server on %s", addr)
	startGoroutines := runtime.NumGoroutine() // after the server's own waiter goroutine started

	stats := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, PoolSize: 1})
	defer stats.Close()
	if info, err := stats.Info(ctx, "server").Result(); err == nil {
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
				rep.Redis = v
			}
		}
	}

	one := func(int) string { return "bench:c" }
	sc := []scenario{
		{name: "uncontended", duration: cfg.duration, keys: func(i int) string { return fmt.Sprintf("bench:u:%d", i) }},
		{name: "contended", duration: cfg.contDuration, critical: cfg.critical, shared: true, keys: one},
	}
	for _, n := range cfg.clients {
		sc = append(sc, scenario{name: fmt.Sprintf("contended-%dc", n), duration: cfg.contDuration, critical: cfg.critical,
			shared: true, keys: one, goroutines: n, perClient: true})
	}
	if cfg.scenarios != "" {
		want := strings.Split(cfg.scenarios, ",")
		sc = slices.DeleteFunc(sc, func(s scenario) bool { return !slices.Contains(want, s.name) })
		if len(sc) == 0 {
			fmt.Fprintf(os.Stderr, "bench: -scenarios %q names none of the scenarios\n", cfg.scenarios)
			os.Exit(2)
		}
	}
	type key struct{ scenario, impl string }
	pooled := map[key]*scenarioResult{}
	failed := map[string]bool{}
	nrounds := cfg.rounds
	if cfg.rwOnly {
		nrounds, cfg.holdLocks, cfg.rw, cfg.sem, cfg.obj, cfg.multi = 0, 0, true, false, false, false
	}
	if cfg.semOnly {
		nrounds, cfg.holdLocks, cfg.rw, cfg.sem, cfg.obj, cfg.multi = 0, 0, false, true, false, false
	}
	if cfg.objOnly {
		nrounds, cfg.holdLocks, cfg.rw, cfg.sem, cfg.obj, cfg.multi = 0, 0, false, false, true, false
	}
	if cfg.trackOnly {
		nrounds, cfg.trackCost, cfg.holdCluster, cfg.rw, cfg.sem, cfg.obj, cfg.multi = 0, true, false, false, false, false, false
	}
	if cfg.multiOnly {
		nrounds, cfg.holdLocks, cfg.rw, cfg.sem, cfg.obj, cfg.multi = 0, 0, false, false, false, true
	}
rounds:
	for round := range nrounds {
		for j := range impls {
			im := impls[(j+round)%len(impls)] // rotate the order so no implementation always goes first
			if failed[im.name] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rep.Settings[im.name] = im.settings
			if cfg.rounds > 1 {
				logf("round %d/%d", round+1, cfg.rounds)
			}
			res, err := benchImpl(ctx, addr, stats, im, sc, cfg)
			for _, r := range res {
				k := key{r.Scenario, r.Impl}
				if p := pooled[k]; p != nil {
					p.merge(r)
				} else {
					pooled[k] = r
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				msg := fmt.Sprintf("%s (round %d): %v", im.name, round+1, err)
				logf("FAILED %s", msg)
				rep.Failures = append(rep.Failures, msg)
				failed[im.name] = true
				if errors.Is(err, errStuck) {
					// Workers are stuck inside the implementation: later runs in this process
					// would be disturbed. Report what we have.
					break rounds
				}
			}
		}
	}
	for _, im := range impls {
		for _, s := range sc {
			if r := pooled[key{s.name, im.name}]; r != nil {
				if s.name == "uncontended" {
					rep.Uncontended = append(rep.Uncontended, r)
				} else {
					rep.Contended = append(rep.Contended, r)
				}
			}
		}
	}

	if cfg.holdLocks > 0 && !cfg.trackOnly && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: hold test, %d locks, watchdog %v", cfg.holdLocks, cfg.holdWatchdog)
		h, err := holdTest(ctx, addr, stats, cfg.holdLocks, cfg.holdWatchdog, cfg.holdPeriods, cfg.goroutines)
		rep.Hold = h
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.HoldError = err.Error()
			rep.Failures = append(rep.Failures, "redisson hold test: "+err.Error())
			logf("FAILED hold test: %v", err)
		}
	}
	if cfg.holdLocks > 0 && cfg.holdCluster && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: hold test on a Cluster, %d locks, watchdog %v", cfg.holdLocks, cfg.holdWatchdog)
		h, err := clusterHoldTest(ctx, cfg.holdLocks, cfg.holdWatchdog, cfg.holdPeriods, cfg.goroutines)
		rep.ClusterHold = h
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failures = append(rep.Failures, "redisson cluster hold test: "+err.Error())
			logf("FAILED cluster hold test: %v", err)
		}
	}
	if cfg.trackCost && cfg.holdLocks > 0 && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: cost of held locks, loss tracking off and on")
		r, err := trackCost(ctx, addr, stats, []int{1, cfg.holdLocks}, cfg.holdWatchdog, cfg.goroutines)
		rep.TrackCost = r
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failures = append(rep.Failures, "redisson tracking cost: "+err.Error())
		}
	}
	if cfg.rw && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: read-heavy ReadWriteLock scenario")
		r, err := rwBench(ctx, addr, 16, cfg.rwReads, cfg.critical, cfg.contDuration)
		rep.RW = r
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failures = append(rep.Failures, "redisson read-heavy scenario: "+err.Error())
		}
	}
	if cfg.sem && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: Semaphore scenario")
		r, err := semBench(ctx, addr, stats, 4, cfg.critical, cfg.contDuration)
		rep.Sem = r
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failures = append(rep.Failures, "redisson semaphore scenario: "+err.Error())
		}
	}
	if cfg.obj && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: data objects scenario")
		r, err := objBench(ctx, addr, 500*time.Millisecond, 8)
		rep.Obj = r
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failures = append(rep.Failures, "redisson data objects scenario: "+err.Error())
		}
	}
	if cfg.multi && slices.ContainsFunc(impls, func(im impl) bool { return im.name == "redisson" }) && ctx.Err() == nil {
		logf("redisson: MultiLock order scenario")
		r, err := multiBench(ctx, addr, cfg.critical, cfg.contDuration)
		rep.Multi = r
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Failures = append(rep.Failures, "redisson MultiLock order scenario: "+err.Error())
		} else {
			logf("redisson: MultiLock order: same %.0f acq/s, opposite %.0f acq/s, ratio %.2f", r.SameOps, r.OppositeOps, r.Ratio)
		}
	}
	if err := stats.FlushAll(ctx).Err(); err != nil && ctx.Err() != nil {
		return ctx.Err()
	}

	rep.Ratios = ratios(rep)
	rep.Goroutines = settleGoroutines() - startGoroutines
	rep.TotalSecs = time.Since(rep.Started).Seconds()
	if rep.Goroutines > 0 {
		logf("warning: %d goroutines more than at start; goroutine dump:", rep.Goroutines)
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
	}
	return output(cfg, rep)
}

// fromJSON reads the report of an earlier -json run and outputs it as run does.
func fromJSON(cfg *config) error {
	b, err := os.ReadFile(cfg.fromJSON)
	if err != nil {
		return err
	}
	if i := bytes.IndexByte(b, '{'); i > 0 {
		b = b[i:] // make's echo of the command, when the output of `make bench ARGS=-json` was saved
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", cfg.fromJSON, err)
	}
	return output(cfg, &rep)
}

// output prints the report (markdown, or JSON with -json) and writes its charts (-charts).
func output(cfg *config, rep *report) error {
	if cfg.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReport(os.Stdout, rep)
	}
	if cfg.charts != "" {
		files, err := writeCharts(cfg.charts, rep)
		if err != nil {
			return fmt.Errorf("charts: %w", err)
		}
		logf("charts: %s", strings.Join(files, ", "))
	}
	return nil
}

// benchImpl runs every scenario for one implementation on a flushed server.
func benchImpl(ctx context.Context, addr string, stats *redis.Client, im impl, scs []scenario, cfg *config) (out []*scenarioResult, err error) {
	if err := stats.FlushAll(ctx).Err(); err != nil {
		return nil, fmt.Errorf("flushall: %w", err)
	}
	var opened []locker
	stuck := false
	defer func() {
		if stuck {
			return // closing could block on the stuck workers
		}
		for _, lk := range opened {
			if cerr := lk.close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("close: %w", cerr))
			}
		}
	}()
	open := func(n int) ([]locker, error) {
		var lks []locker
		for range n {
			lk, err := im.open(addr, cfg)
			if err != nil {
				return nil, fmt.Errorf("open: %w", err)
			}
			opened = append(opened, lk)
			lks = append(lks, lk)
		}
		return lks, nil
	}
	shared, err := open(1)
	if err != nil {
		return nil, err
	}
	if err := warmup(ctx, shared[0], cfg.goroutines); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	for _, sc := range scs {
		if sc.name == "uncontended" && im.contendedOnly {
			continue
		}
		n := cmp.Or(sc.goroutines, cfg.goroutines)
		lks := shared
		if sc.perClient {
			if lks, err = open(n); err != nil {
				return out, err
			}
			for _, lk := range lks {
				if err := warmup(ctx, lk, 1); err != nil {
					return out, fmt.Errorf("warm-up: %w", err)
				}
			}
		}
		handle := func(i int) handle { return lks[i%len(lks)].handle(sc.keys(i)) }
		logf("%s: %s, %d goroutines, %v", im.name, sc.name, n, sc.duration)
		r, err := runScenario(ctx, stats, im, handle, sc, n)
		if r != nil {
			out = append(out, r)
		}
		if err != nil {
			stuck = errors.Is(err, errStuck)
			return out, err
		}
		logf("%s: %s: %.0f ops/s, wait p50 %.2fms p99 %.2fms max %.2fms, jain %.3f, %.2f cmds/acq (%.2f top-level), %d errors",
			im.name, sc.name, r.OpsPerSec, r.WaitP50Ms, r.WaitP99Ms, r.WaitMaxMs, r.Fairness, r.CmdsPerAcqAll, r.CmdsPerAcqTop, r.Errors)
	}
	return out, nil
}
