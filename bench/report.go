package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// peers are the implementations this library is compared with (not the floor).
var peers = []string{"redsync", "redislock", "rueidislock", "rueidislock-km1"}

type ratio struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Detail string  `json:"detail"`
}

func find(rs []*scenarioResult, name string) *scenarioResult {
	for _, r := range rs {
		if r.Impl == name {
			return r
		}
	}
	return nil
}

// bestPeer returns the peer result that minimises key (results without acquisitions are skipped).
func bestPeer(rs []*scenarioResult, key func(*scenarioResult) float64) *scenarioResult {
	var best *scenarioResult
	for _, r := range rs {
		if !slices.Contains(peers, r.Impl) || r.Acquisitions == 0 {
			continue
		}
		if best == nil || key(r) < key(best) {
			best = r
		}
	}
	return best
}

// contendedScenarios returns the names of the contended scenarios in rs, in report order: the shared
// Client's, then the per-Client ones by their number of Clients.
func contendedScenarios(rs []*scenarioResult) []string {
	var names []string
	goroutines := map[string]int{}
	for _, r := range rs {
		if _, ok := goroutines[r.Scenario]; !ok {
			names = append(names, r.Scenario)
			goroutines[r.Scenario] = r.Goroutines
		}
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if (a == "contended") != (b == "contended") {
			if a == "contended" {
				return -1
			}
			return 1
		}
		return goroutines[a] - goroutines[b]
	})
	return names
}

// ofScenario returns the results of one scenario.
func ofScenario(rs []*scenarioResult, name string) []*scenarioResult {
	var out []*scenarioResult
	for _, r := range rs {
		if r.Scenario == name {
			out = append(out, r)
		}
	}
	return out
}

func ratios(rep *report) []ratio {
	var out []ratio
	add := func(name string, num, den float64, detail string) {
		if den == 0 {
			return
		}
		out = append(out, ratio{Name: name, Value: num / den, Detail: detail})
	}
	if me, fl := find(rep.Uncontended, "redisson"), find(rep.Uncontended, "floor"); me != nil && fl != nil {
		add("uncontended ops/s: redisson / floor", me.OpsPerSec, fl.OpsPerSec,
			fmt.Sprintf("%.0f / %.0f", me.OpsPerSec, fl.OpsPerSec))
	}
	// The loss tracking's cost: the default Client (tracking on) against the same with it off.
	if on, off := find(rep.Uncontended, "redisson"), find(rep.Uncontended, "redisson-notrack"); on != nil && off != nil {
		add("uncontended ops/s: redisson / redisson-notrack (loss tracking on / off)", on.OpsPerSec, off.OpsPerSec,
			fmt.Sprintf("%.0f / %.0f", on.OpsPerSec, off.OpsPerSec))
	}
	for _, name := range contendedScenarios(rep.Contended) {
		rs := ofScenario(rep.Contended, name)
		if on, off := find(rs, "redisson"), find(rs, "redisson-notrack"); on != nil && off != nil {
			add(fmt.Sprintf("%s ops/s: redisson / redisson-notrack (loss tracking on / off)", name), on.OpsPerSec, off.OpsPerSec,
				fmt.Sprintf("%.0f / %.0f", on.OpsPerSec, off.OpsPerSec))
		}
		for _, impl := range []string{"redisson", "redisson-fair"} {
			me := find(rs, impl)
			if me == nil {
				continue
			}
			if b := bestPeer(rs, func(r *scenarioResult) float64 { return -r.OpsPerSec }); b != nil {
				add(fmt.Sprintf("%s ops/s: %s / best peer", name, impl), me.OpsPerSec, b.OpsPerSec,
					fmt.Sprintf("%.0f / %.0f (%s)", me.OpsPerSec, b.OpsPerSec, b.Impl))
			}
			if b := find(rs, "bare"); b != nil {
				add(fmt.Sprintf("%s ops/s: %s / bare queue design", name, impl), me.OpsPerSec, b.OpsPerSec,
					fmt.Sprintf("%.0f / %.0f", me.OpsPerSec, b.OpsPerSec))
				add(fmt.Sprintf("%s hand-over p50: %s / bare queue design", name, impl), me.HandOverP50Us, b.HandOverP50Us,
					fmt.Sprintf("%.0fµs / %.0fµs; lower is better", me.HandOverP50Us, b.HandOverP50Us))
			}
			if mx := find(rs, "mutex"); mx != nil {
				add(fmt.Sprintf("%s ops/s: %s / in-process mutex", name, impl), me.OpsPerSec, mx.OpsPerSec,
					fmt.Sprintf("%.0f / %.0f", me.OpsPerSec, mx.OpsPerSec))
			}
			if b := bestPeer(rs, func(r *scenarioResult) float64 { return r.WaitP99Ms }); b != nil {
				add(fmt.Sprintf("%s p99 wait: %s / best peer", name, impl), me.WaitP99Ms, b.WaitP99Ms,
					fmt.Sprintf("%.2fms / %.2fms (%s); lower is better", me.WaitP99Ms, b.WaitP99Ms, b.Impl))
			}
			if b := bestPeer(rs, func(r *scenarioResult) float64 { return r.CmdsPerAcqAll }); b != nil {
				add(fmt.Sprintf("%s cmds/acq (all): %s / best peer", name, impl), me.CmdsPerAcqAll, b.CmdsPerAcqAll,
					fmt.Sprintf("%.2f / %.2f (%s); lower is better", me.CmdsPerAcqAll, b.CmdsPerAcqAll, b.Impl))
			}
		}
	}
	for _, impl := range []string{"redisson", "redisson-fair"} {
		a, b := find(ofScenario(rep.Contended, "contended-64c"), impl), find(ofScenario(rep.Contended, "contended-16c"), impl)
		if a != nil && b != nil {
			add(fmt.Sprintf("cmds/acq (all), 64 Clients / 16 Clients: %s", impl), a.CmdsPerAcqAll, b.CmdsPerAcqAll,
				fmt.Sprintf("%.2f / %.2f; within ±20%% means the cost does not grow with the number of processes", a.CmdsPerAcqAll, b.CmdsPerAcqAll))
		}
	}
	if me := find(rep.Uncontended, "redisson"); me != nil {
		for _, kind := range []string{"all", "top-level"} {
			get := func(r *scenarioResult) float64 {
				if kind == "all" {
					return r.CmdsPerAcqAll
				}
				return r.CmdsPerAcqTop
			}
			if fl := find(rep.Uncontended, "floor"); fl != nil {
				add(fmt.Sprintf("uncontended cmds/acq (%s): redisson / floor", kind), get(me), get(fl),
					fmt.Sprintf("%.2f / %.2f", get(me), get(fl)))
			}
		}
	}
	return out
}

func errCell(r *scenarioResult) string {
	if r.Errors == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (first: %s)", r.Errors, strings.ReplaceAll(r.FirstError, "|", "/"))
}

// roundsCell shows the spread of ops/s over the rounds.
func roundsCell(r *scenarioResult) string {
	if len(r.RoundOpsPerSec) < 2 {
		return "-"
	}
	return fmt.Sprintf("%.0f–%.0f", slices.Min(r.RoundOpsPerSec), slices.Max(r.RoundOpsPerSec))
}

func breakdown(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		return m[names[i]] > m[names[j]] || m[names[i]] == m[names[j]] && names[i] < names[j]
	})
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

func printReport(w io.Writer, rep *report) {
	fmt.Fprintf(w, "## Lock benchmark: %s, GOMAXPROCS=%d, redis %s, %d goroutines\n\n", rep.GoVersion, rep.GOMAXPROCS, rep.Redis, atoi(rep.Config["goroutines"]))

	if len(rep.Uncontended) > 0 {
		fmt.Fprintf(w, "### Uncontended: each goroutine locks+unlocks its own key, %s\n\n", rep.Config["duration"])
		fmt.Fprintln(w, "| impl | ops/s | per round | acquisitions | cmds/acq (all) | cmds/acq (top-level) | redis CPU µs/acq | client CPU µs/acq | errors |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|")
		for _, r := range rep.Uncontended {
			fmt.Fprintf(w, "| %s | %.0f | %s | %d | %.2f | %.2f | %.1f | %.1f | %s |\n", r.Impl, r.OpsPerSec, roundsCell(r), r.Acquisitions, r.CmdsPerAcqAll, r.CmdsPerAcqTop, r.RedisCPUUsPerAcq, r.ClientCPUUsPerAcq, errCell(r))
		}
		fmt.Fprintln(w)
	}
	for _, name := range contendedScenarios(rep.Contended) {
		rs := ofScenario(rep.Contended, name)
		if len(rs) == 0 {
			continue
		}
		who := fmt.Sprintf("%d goroutines of one process sharing each implementation's client", rs[0].Goroutines)
		if name != "contended" {
			who = fmt.Sprintf("%d goroutines, each with its own client (as %d processes would be)", rs[0].Goroutines, rs[0].Goroutines)
			if rs[0].Goroutines == 1 {
				who = "1 goroutine with its own client (as 1 process would be)"
			}
		}
		fmt.Fprintf(w, "### %s: %s, all on one key, critical section time.Sleep(%s), %s\n\n", name, who, rep.Config["critical"], rep.Config["contended_duration"])
		fmt.Fprintln(w, "| impl | ops/s | per round | wait p50 ms | wait p99 ms | wait max ms | hand-over p50 µs | Jain fairness | cmds/acq (all) | cmds/acq (top-level) | redis CPU µs/acq | client CPU µs/acq | errors | excl. violations |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
		for _, r := range rs {
			fmt.Fprintf(w, "| %s | %.0f | %s | %.2f | %.2f | %.2f | %.0f | %.2f | %.2f | %.2f | %.1f | %.1f | %s | %d |\n", r.Impl, r.OpsPerSec, roundsCell(r), r.WaitP50Ms, r.WaitP99Ms, r.WaitMaxMs, r.HandOverP50Us, r.Fairness, r.CmdsPerAcqAll, r.CmdsPerAcqTop, r.RedisCPUUsPerAcq, r.ClientCPUUsPerAcq, errCell(r), r.Violations)
		}
		fmt.Fprintln(w)
	}
	if h := rep.Hold; h != nil {
		metricTable(w, fmt.Sprintf("redisson: %d locks held with the watchdog (WithWatchdogTimeout(%s), renewal every %s)", h.Locks, h.Watchdog, h.RenewPeriod), [][2]string{
			{"acquire time (s), errors", fmt.Sprintf("%.2f, %d", h.AcquireSeconds, h.AcquireErrors)},
			{"goroutines added while holding", fmt.Sprint(h.GoroutinesAdded)},
			{"heap added while holding (MiB)", fmt.Sprintf("%.2f", float64(h.HeapAddedBytes)/(1<<20))},
			{"heap per held lock (bytes)", fmt.Sprintf("%.0f", h.HeapPerLock)},
			{"Stats().Held / lock keys in Redis", fmt.Sprintf("%d / %d", h.HeldStat, h.LockKeys)},
			{"renew window (s) / intervals", fmt.Sprintf("%.2f / %.2f", h.WindowSeconds, h.IntervalsElapsed)},
			{"renew round trips (RenewCalls delta)", fmt.Sprint(h.RenewCalls)},
			{"renew round trips per interval", fmt.Sprintf("%.1f", h.RenewCallsPerPeriod)},
			{"locks renewed per interval", fmt.Sprintf("%.0f", h.RenewedPerPeriod)},
			{"lost during window", fmt.Sprint(h.LostDuringWindow)},
			{"lock keys after window / min PTTL of 100 sampled (ms)", fmt.Sprintf("%d / %d", h.LockKeysAfterWindow, h.MinPTTLAfterWindow)},
			{"unlock time (s), errors", fmt.Sprintf("%.2f, %d", h.UnlockSeconds, h.UnlockErrors)},
			{"Stats().Held / lock keys after unlock", fmt.Sprintf("%d / %d", h.HeldAfterUnlock, h.LockKeysAfterUnlock)},
			{"goroutines after unlock - base", fmt.Sprint(h.GoroutinesAfterAll)},
		})
	}
	if h := rep.ClusterHold; h != nil {
		metricTable(w, fmt.Sprintf("redisson on a Cluster (%d masters + replicas): %d locks with random names held with the watchdog (WithWatchdogTimeout(%s))", h.Masters, h.Locks, h.Watchdog), [][2]string{
			{"acquire time (s), errors", fmt.Sprintf("%.2f, %d", h.AcquireSeconds, h.AcquireErrors)},
			{"renewal intervals observed", fmt.Sprintf("%.2f", h.IntervalsElapsed)},
			{"renew round trips per interval, all nodes", fmt.Sprintf("%.1f", h.RenewCallsPerPeriod)},
			{"renew round trips per node per interval", fmt.Sprintf("%.1f", h.PerNodePerPeriod)},
			{"locks renewed per interval", fmt.Sprintf("%.0f", h.RenewedPerPeriod)},
			{"lost during window", fmt.Sprint(h.LostDuringWindow)},
			{"unlock errors", fmt.Sprint(h.UnlockErrors)},
		})
	}
	if len(rep.TrackCost) > 0 {
		printTrackCost(w, rep.TrackCost)
	}
	if rep.Sem != nil {
		printSem(w, rep.Sem)
	}
	if rep.Obj != nil {
		printObj(w, rep.Obj)
	}
	if rep.RW != nil {
		printRW(w, rep.RW)
		fmt.Fprintln(w)
	}
	if rep.Multi != nil {
		printMulti(w, rep.Multi)
		fmt.Fprintln(w)
	}
	if len(rep.Ratios) > 0 {
		fmt.Fprintln(w, "### Ratios")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| ratio | value | detail |")
		fmt.Fprintln(w, "|---|---:|---|")
		for _, r := range rep.Ratios {
			fmt.Fprintf(w, "| %s | %.2f | %s |\n", r.Name, r.Value, r.Detail)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Failures) > 0 {
		fmt.Fprintln(w, "### Failures")
		fmt.Fprintln(w)
		for _, f := range rep.Failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "### Settings")
	fmt.Fprintln(w)
	var names []string
	for k := range rep.Settings {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "- %s: %s\n", k, rep.Settings[k])
	}
	fmt.Fprintf(w, "- -poll=%s\n", rep.Config["poll"])
	fmt.Fprintln(w, "- cmds/acq: INFO commandstats `calls` delta over the scenario (read from a separate client), divided by successful acquisitions."+
		" \"all\" counts every command, including those called from inside Lua scripts; \"top-level\" subtracts the commands the implementation only calls inside its scripts."+
		" Housekeeping (hello, ping, client|*, info, ...) is excluded from both. Failed attempts and waits cut off at the end are included.")
	fmt.Fprintln(w)

	// Machine-readable lines.
	for _, r := range append(slices.Clone(rep.Uncontended), rep.Contended...) {
		fmt.Fprintf(w, "RESULT scenario=%s impl=%s ops_per_sec=%.1f acquisitions=%d wait_p50_ms=%.3f wait_p99_ms=%.3f wait_max_ms=%.3f hand_over_p50_us=%.1f hand_over_p99_us=%.1f jain=%.3f cmds_per_acq_all=%.3f cmds_per_acq_top=%.3f redis_cpu_us_per_acq=%.2f redis_script_us_per_acq=%.2f client_cpu_us_per_acq=%.2f errors=%d violations=%d cmds=%s\n",
			r.Scenario, r.Impl, r.OpsPerSec, r.Acquisitions, r.WaitP50Ms, r.WaitP99Ms, r.WaitMaxMs, r.HandOverP50Us, r.HandOverP99Us, r.Fairness, r.CmdsPerAcqAll, r.CmdsPerAcqTop, r.RedisCPUUsPerAcq, r.RedisScriptUsPerAcq, r.ClientCPUUsPerAcq, r.Errors, r.Violations, breakdown(r.CmdBreakdown))
	}
	if h := rep.Hold; h != nil {
		fmt.Fprintf(w, "RESULT scenario=hold impl=redisson locks=%d watchdog=%s goroutines_added=%d heap_added_bytes=%d heap_per_lock=%.0f renew_calls_per_interval=%.2f renewed_per_interval=%.0f lost=%d acquire_errors=%d unlock_errors=%d\n",
			h.Locks, h.Watchdog, h.GoroutinesAdded, h.HeapAddedBytes, h.HeapPerLock, h.RenewCallsPerPeriod, h.RenewedPerPeriod, h.LostDuringWindow, h.AcquireErrors, h.UnlockErrors)
	}
	if h := rep.ClusterHold; h != nil {
		fmt.Fprintf(w, "RESULT scenario=hold-cluster impl=redisson locks=%d masters=%d renew_calls_per_interval=%.2f renew_calls_per_node_per_interval=%.2f renewed_per_interval=%.0f lost=%d acquire_errors=%d unlock_errors=%d\n",
			h.Locks, h.Masters, h.RenewCallsPerPeriod, h.PerNodePerPeriod, h.RenewedPerPeriod, h.LostDuringWindow, h.AcquireErrors, h.UnlockErrors)
	}
	for _, r := range rep.TrackCost {
		fmt.Fprintf(w, "RESULT scenario=track-cost impl=redisson tracking=%s locks=%d redis_mem_per_lock=%.0f conns=%d tracking_keys=%d redis_cmds_per_sec=%.0f goroutines_added=%d heap_per_lock=%.0f\n",
			onOff(r.Tracking), r.Locks, r.RedisMemPerLock, r.ConnsAdded, r.TrackingKeys, r.CmdsPerSec, r.GoroutinesAdded, r.HeapPerLock)
	}
	for _, r := range rep.Ratios {
		fmt.Fprintf(w, "RATIO name=%q value=%.3f\n", r.Name, r.Value)
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// metricTable prints a "metric | value" table under a heading.
func metricTable(w io.Writer, title string, rows [][2]string) {
	fmt.Fprintf(w, "### %s\n\n", title)
	fmt.Fprintln(w, "| metric | value |")
	fmt.Fprintln(w, "|---|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s |\n", r[0], r[1])
	}
	fmt.Fprintln(w)
}
