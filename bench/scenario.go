package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// scenarioResult is one implementation in one scenario.
type scenarioResult struct {
	Scenario     string  `json:"scenario"`
	Impl         string  `json:"impl"`
	Goroutines   int     `json:"goroutines"`
	Critical     string  `json:"critical_section"`
	Seconds      float64 `json:"seconds"`      // start to last worker done
	Ops          int64   `json:"ops"`          // completed lock+unlock pairs
	Acquisitions int64   `json:"acquisitions"` // successful Lock calls
	OpsPerSec    float64 `json:"ops_per_sec"`  // Ops / Seconds
	Errors       int64   `json:"errors"`       // failed Lock (before the end) or Unlock calls
	FirstError   string  `json:"first_error,omitempty"`
	Violations   int64   `json:"mutual_exclusion_violations"` // acquisitions while another holder was inside
	Stuck        int     `json:"stuck_workers"`               // workers that did not stop within the grace period

	WaitP50Ms float64 `json:"wait_p50_ms"`
	WaitP99Ms float64 `json:"wait_p99_ms"`
	WaitMaxMs float64 `json:"wait_max_ms"`

	// Hand-overs (shared-key scenarios): the gap from the moment a holder starts its release to the
	// moment the next holder's Lock returns, for acquisitions whose Lock call began before that
	// release did (the waiter was waiting: a hand-over, not a free lock found).
	HandOvers     int64   `json:"hand_overs"`
	HandOverP50Us float64 `json:"hand_over_p50_us"`
	HandOverP99Us float64 `json:"hand_over_p99_us"`

	// Jain's fairness index over the acquisitions of each goroutine: 1 when all got the same number,
	// 1/goroutines when one got them all.
	Fairness  float64 `json:"jain_fairness"`
	PerWorker []int64 `json:"acquisitions_per_goroutine"` // summed over rounds

	// Redis commands during the scenario (INFO commandstats delta, housekeeping commands excluded).
	CmdsAll       int64            `json:"cmds_all"`
	CmdsTop       int64            `json:"cmds_top_level"`
	CmdsPerAcqAll float64          `json:"cmds_per_acq_all"`
	CmdsPerAcqTop float64          `json:"cmds_per_acq_top_level"`
	CmdsExcluded  int64            `json:"cmds_excluded_housekeeping"`
	CmdBreakdown  map[string]int64 `json:"cmd_breakdown"`

	// CPU time per successful acquisition: of redis-server (INFO cpu, main process user+sys) and of
	// this benchmark process (getrusage user+sys; includes the harness itself).
	RedisCPUSec       float64 `json:"redis_cpu_seconds"`
	ClientCPUSec      float64 `json:"client_cpu_seconds"`
	RedisCPUUsPerAcq  float64 `json:"redis_cpu_us_per_acq"`
	ClientCPUUsPerAcq float64 `json:"client_cpu_us_per_acq"`
	// Time redis-server spent running scripts (INFO commandstats usec of EVAL, EVALSHA and their
	// read-only forms, their own commands included), per successful acquisition: the part of the
	// Redis CPU that a script's length decides, apart from reading, writing and polling sockets.
	RedisScriptUs       int64   `json:"redis_script_us"`
	RedisScriptUsPerAcq float64 `json:"redis_script_us_per_acq"`

	Rounds         int       `json:"rounds"`
	RoundOpsPerSec []float64 `json:"round_ops_per_sec"`

	waits []time.Duration // sorted acquisition waits
	gaps  []time.Duration // sorted hand-over gaps
}

// merge adds the counts of a later round of the same scenario and implementation.
func (r *scenarioResult) merge(o *scenarioResult) {
	r.Seconds += o.Seconds
	r.Ops += o.Ops
	r.Acquisitions += o.Acquisitions
	r.Errors += o.Errors
	if r.FirstError == "" {
		r.FirstError = o.FirstError
	}
	r.Violations += o.Violations
	r.Stuck += o.Stuck
	r.CmdsAll += o.CmdsAll
	r.CmdsTop += o.CmdsTop
	r.CmdsExcluded += o.CmdsExcluded
	r.RedisCPUSec += o.RedisCPUSec
	r.RedisScriptUs += o.RedisScriptUs
	r.ClientCPUSec += o.ClientCPUSec
	for k, v := range o.CmdBreakdown {
		r.CmdBreakdown[k] += v
	}
	r.Rounds += o.Rounds
	r.RoundOpsPerSec = append(r.RoundOpsPerSec, o.RoundOpsPerSec...)
	r.waits = append(r.waits, o.waits...)
	r.gaps = append(r.gaps, o.gaps...)
	for i, n := range o.PerWorker {
		if i < len(r.PerWorker) {
			r.PerWorker[i] += n
		}
	}
	r.derive()
}

// derive computes the rates, percentiles and per-acquisition figures from the counts.
func (r *scenarioResult) derive() {
	if r.Seconds > 0 {
		r.OpsPerSec = float64(r.Ops) / r.Seconds
	}
	slices.Sort(r.waits)
	r.WaitP50Ms = ms(percentile(r.waits, 0.50))
	r.WaitP99Ms = ms(percentile(r.waits, 0.99))
	r.WaitMaxMs = 0
	if len(r.waits) > 0 {
		r.WaitMaxMs = ms(r.waits[len(r.waits)-1])
	}
	slices.Sort(r.gaps)
	r.HandOvers = int64(len(r.gaps))
	r.HandOverP50Us = us(percentile(r.gaps, 0.50))
	r.HandOverP99Us = us(percentile(r.gaps, 0.99))
	r.Fairness = jain(r.PerWorker)
	r.CmdsPerAcqAll, r.CmdsPerAcqTop = 0, 0
	if r.Acquisitions > 0 {
		r.CmdsPerAcqAll = float64(r.CmdsAll) / float64(r.Acquisitions)
		r.CmdsPerAcqTop = float64(r.CmdsTop) / float64(r.Acquisitions)
		r.RedisCPUUsPerAcq = r.RedisCPUSec * 1e6 / float64(r.Acquisitions)
		r.RedisScriptUsPerAcq = float64(r.RedisScriptUs) / float64(r.Acquisitions)
		r.ClientCPUUsPerAcq = r.ClientCPUSec * 1e6 / float64(r.Acquisitions)
	}
}

// redisCPU returns used_cpu_user + used_cpu_sys of redis-server from INFO cpu, in seconds.
func redisCPU(ctx context.Context, rdb *redis.Client) (float64, error) {
	s, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for _, line := range strings.Split(s, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu %q: %w", line, err)
			}
			total += f
		}
	}
	return total, nil
}

// processCPU returns the user+sys CPU time of this process, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// housekeeping reports whether a command is connection or benchmark housekeeping (handshakes of new
// pool connections, keep-alive pings, the stats client's own INFO), not lock work.
func housekeeping(cmd string) bool {
	switch cmd {
	case "info", "hello", "ping", "auth", "select", "flushall", "readonly", "quit":
		return true
	}
	return strings.HasPrefix(cmd, "client|") || strings.HasPrefix(cmd, "config|") || strings.HasPrefix(cmd, "command|") || cmd == "client" || cmd == "command"
}

// commandStats returns calls per command from INFO commandstats, and under usecKey+name the
// microseconds spent in it.
func commandStats(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	s, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		for _, f := range strings.Split(rest, ",") {
			key, v, _ := strings.Cut(f, "=")
			switch key {
			case "calls":
			case "usec":
				key = usecKey + name
			default:
				continue
			}
			if key == "calls" {
				key = name
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("commandstats %q: %w", line, err)
			}
			out[key] = n
		}
	}
	return out, nil
}

// usecKey prefixes a command's microseconds in commandStats's map.
const usecKey = "usec:"

// fillCommands sets the command fields of r from two commandstats snapshots.
func fillCommands(r *scenarioResult, im impl, before, after map[string]int64) {
	script := map[string]bool{}
	for _, c := range im.scriptCmds {
		script[c] = true
	}
	r.CmdBreakdown = map[string]int64{}
	for name, n := range after {
		d := n - before[name]
		if d <= 0 {
			continue
		}
		if cmd, ok := strings.CutPrefix(name, usecKey); ok {
			switch cmd {
			case "eval", "evalsha", "eval_ro", "evalsha_ro":
				r.RedisScriptUs += d
			}
			continue
		}
		if housekeeping(name) {
			r.CmdsExcluded += d
			continue
		}
		r.CmdBreakdown[name] = d
		r.CmdsAll += d
		if !script[name] {
			r.CmdsTop += d
		}
	}
}

// scenario describes one load pattern.
type scenario struct {
	name       string
	keys       func(i int) string // key of worker i
	shared     bool               // all workers use one key: check mutual exclusion
	critical   time.Duration
	duration   time.Duration
	goroutines int  // 0: -goroutines
	perClient  bool // every goroutine opens its own implementation (Client), like separate processes
}

// errStuck means workers did not return after the scenario ended: a deadlock or a hung call.
var errStuck = errors.New("workers did not stop")

// warmup makes every worker handle lock and unlock once on its own key, so that pool connections
// exist and scripts are loaded before counting starts.
func warmup(ctx context.Context, lk locker, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := lk.handle(fmt.Sprintf("bench:warm:%d", i))
			if err := h.lock(ctx); err != nil {
				errs[i] = err
				return
			}
			errs[i] = h.unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// run runs one scenario for one implementation: worker i uses handle(i).
func runScenario(ctx context.Context, stats *redis.Client, im impl, handle func(i int) handle, sc scenario, n int) (*scenarioResult, error) {
	r := &scenarioResult{Scenario: sc.name, Impl: im.name, Goroutines: n, Critical: sc.critical.String()}
	before, err := commandStats(ctx, stats)
	if err != nil {
		return nil, err
	}
	rcpu0, err := redisCPU(ctx, stats)
	if err != nil {
		return nil, err
	}
	ccpu0 := processCPU()

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		ops, acqs, errCount, violations atomic.Int64
		holders                         atomic.Int32
		firstErr                        atomic.Value
		wg                              sync.WaitGroup
		waits                           = make([][]time.Duration, n)
		gaps                            = make([][]time.Duration, n)
		released                        atomic.Int64 // when the latest release began, ns since start
	)
	noteErr := func(err error) {
		errCount.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := handle(i)
			w := make([]time.Duration, 0, 1024)
			var g []time.Duration
			for runCtx.Err() == nil {
				t0 := time.Now()
				if err := h.lock(runCtx); err != nil {
					if runCtx.Err() != nil {
						break // the scenario ended while waiting
					}
					noteErr(fmt.Errorf("lock: %w", err))
					time.Sleep(time.Millisecond) // no hot loop on a persistent error
					continue
				}
				got := time.Now()
				w = append(w, got.Sub(t0))
				if rel := start.Add(time.Duration(released.Load())); sc.shared && rel.After(t0) {
					g = append(g, got.Sub(rel))
				}
				acqs.Add(1)
				if sc.shared && holders.Add(1) != 1 {
					violations.Add(1)
				}
				if sc.critical > 0 {
					time.Sleep(sc.critical)
				}
				if sc.shared {
					holders.Add(-1)
					released.Store(int64(time.Since(start)))
				}
				if err := h.unlock(); err != nil {
					noteErr(fmt.Errorf("unlock: %w", err))
					continue
				}
				ops.Add(1)
			}
			waits[i], gaps[i] = w, g
		}()
	}

	select {
	case <-time.After(sc.duration):
	case <-ctx.Done():
	}
	stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		r.Stuck = n // at least one; exact count unknown
		return r, fmt.Errorf("%s/%s: %w within 15s of the end (deadlock or hung call)", im.name, sc.name, errStuck)
	}
	elapsed := time.Since(start)
	ccpu1 := processCPU()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rcpu1, err := redisCPU(ctx, stats)
	if err != nil {
		return nil, err
	}
	r.RedisCPUSec, r.ClientCPUSec = rcpu1-rcpu0, ccpu1-ccpu0

	after, err := commandStats(ctx, stats)
	if err != nil {
		return nil, err
	}
	r.Seconds = elapsed.Seconds()
	r.Ops, r.Acquisitions, r.Errors, r.Violations = ops.Load(), acqs.Load(), errCount.Load(), violations.Load()
	if v := firstErr.Load(); v != nil {
		r.FirstError = v.(string)
	}
	for i, w := range waits {
		r.gaps = append(r.gaps, gaps[i]...)
		r.waits = append(r.waits, w...)
		r.PerWorker = append(r.PerWorker, int64(len(w)))
	}
	fillCommands(r, im, before, after)
	r.derive()
	r.Rounds, r.RoundOpsPerSec = 1, []float64{r.OpsPerSec}
	return r, nil
}

// jain is Jain's fairness index of xs: (Σx)² / (n·Σx²); 0 for no data.
func jain(xs []int64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
