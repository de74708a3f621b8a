package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/goredisson/redisson/internal/scripts"
	"github.com/goredisson/redisson/redistest"
)

// BenchmarkScriptCost measures what Redis spends running the two scripts of a hand-over under
// contention, this library's and the bare queue design's (bare.go), apart from any round trip: each
// EVAL runs a script's source scriptRuns times in a Lua loop, on the state of a queue of 15 waiters
// that one more joins (join) or that the holder hands the lock to the head of (hand-over, the head
// subscribed to its wake channel). It reports ns/run, the cost of one run, including the commands
// the loop adds to keep the queue at 15 (a ZADD or ZPOPMIN, an RPUSH or LPOP: the join-only and
// hand-over-only rows give the same for both designs, so compare rows of one design with each
// other and the designs' totals with each other). The part rows time pieces of ours alone. Run it with
// `cd bench && go test -run XXX -bench ScriptCost`; see README.md, "Where a hand-over's time goes".
func BenchmarkScriptCost(b *testing.B) {
	const owner = "0f1e2d3c4b5a69788796a5b4c3d2e1f0" // a client id of this library's length
	const epoch = "1733283724123456"
	ctx := context.Background()
	rdb := redistest.Start(b).Client(b)
	sub := rdb.Subscribe(ctx, "w:{k}"+owner, barePrefix+owner)
	defer sub.Close()
	for range 2 {
		if _, err := sub.Receive(ctx); err != nil {
			b.Fatal(err)
		}
	}
	go func() {
		for range sub.Channel() {
		}
	}()
	// loop runs src as a function scriptRuns times, after setup, with the ARGV table args (a Lua
	// expression of i, the run), then keep (a statement keeping the queue's length).
	loop := func(src, setup, args, keep string) string {
		return fmt.Sprintf("local function run(KEYS, ARGV)\n%s\nend\n%s\nfor i = 1, %d do run(KEYS, %s) %s end return 1",
			src, setup, scriptRuns, args, keep)
	}
	// parts runs body scriptRuns times after setup, the lock prelude defined.
	parts := func(setup, body string) string {
		return fmt.Sprintf("%s\n%s\nfor i = 1, %d do %s end return 1", scripts.LockPrelude(), setup, scriptRuns, body)
	}
	held := `redis.call('SET', KEYS[1], 'h:1|1|w` + epoch + `', 'PX', 60000) redis.call('ZADD', KEYS[3], 9999999999999, '` + owner + `')`
	zfill := `for i = 1, 15 do redis.call('ZADD', KEYS[2], ` + epoch + ` + i, '` + owner + `:' .. i .. '/5000') end `
	lfill := `for i = 1, 15 do redis.call('RPUSH', KEYS[2], '` + owner + `:' .. i) end `
	rows := []struct{ name, src string }{
		{"ours/join", loop(scripts.Source(scripts.LockAcquire), held+` `+zfill,
			`{'`+owner+`:' .. (i + 15), '30000', '1', 'w', '', '5000', '`+epoch+`'}`, `redis.call('ZPOPMIN', KEYS[2])`)},
		{"ours/hand-over", loop(scripts.Source(scripts.LockRelease),
			`redis.call('SET', KEYS[1], '`+owner+`:0|1|w`+epoch+`', 'PX', 60000) redis.call('ZADD', KEYS[3], 9999999999999, '`+owner+`') `+zfill,
			`{'`+owner+`:' .. (i - 1), '1', '1', '', '30000', 'PUBLISH', 'w:{k}', '', '5000'}`,
			`redis.call('ZADD', KEYS[2], `+epoch+` + i + 15, '`+owner+`:' .. (i + 15) .. '/5000')`)},
		{"ours/prelude", loop(scripts.LockPrelude()+"\nreturn 1", "", "{}", "")},
		// Parts of ours, each as a loop of its own (with the prelude defined: part of no row's cost).
		{"part/zadd+zpopmin", parts(zfill, `redis.call('ZADD', KEYS[2], `+epoch+` + i + 15, '`+owner+`:' .. (i + 15) .. '/5000') redis.call('ZPOPMIN', KEYS[2])`)},
		{"part/rpush+lpop", parts(lfill, `redis.call('RPUSH', KEYS[2], '`+owner+`:' .. (i + 15)) redis.call('LPOP', KEYS[2])`)},
		{"part/queue_now", parts("", `local ms, us = queue_now()`)},
		{"part/lock_decode", parts("", `local o, l, m, k, t = lock_decode('`+owner+`:12|1|w`+epoch+`')`)},
		{"part/set-px-number", parts("", `redis.call('SET', KEYS[1], '`+owner+`:12|1|w`+epoch+`', 'PX', 5000)`)},
		{"part/set-px-string", parts("", `redis.call('SET', KEYS[1], '`+owner+`:12|1|w`+epoch+`', 'PX', '5000')`)},
		{"bare/join", loop(bareAcquireSrc, `redis.call('SET', KEYS[1], 'h:1', 'PX', 60000) `+lfill,
			`{'`+owner+`:' .. (i + 15), '30000'}`, `redis.call('LPOP', KEYS[2])`)},
		{"bare/hand-over", loop(bareReleaseSrc, `redis.call('SET', KEYS[1], '`+owner+`:0', 'PX', 60000) `+lfill,
			`{'`+owner+`:' .. (i - 1), '30000', '`+barePrefix+`'}`, `redis.call('RPUSH', KEYS[2], '`+owner+`:' .. (i + 15))`)},
	}
	keys := []string{"{k}", "{k}:q", "{k}:qt", "{k}:f"}
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				if err := rdb.Del(ctx, keys...).Err(); err != nil {
					b.Fatal(err)
				}
				if err := rdb.Eval(ctx, r.src, keys).Err(); err != nil {
					b.Fatal(err)
				}
			}
			// Every run of a hand-over handed the lock on: the last one to the last waiter.
			if strings.HasSuffix(r.name, "hand-over") {
				if v, err := rdb.Get(ctx, "{k}").Result(); err != nil || !strings.HasPrefix(v, fmt.Sprint(owner, ":", scriptRuns)) {
					b.Fatalf("lock after the runs: %q, %v", v, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*scriptRuns), "ns/run")
		})
	}
}

// scriptRuns is how many times one EVAL of BenchmarkScriptCost runs a script.
const scriptRuns = 2000
