package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zeebo/xxh3"

	"github.com/goredisson/redisson"
)

// objResult is the data objects scenario: throughput of each operation against the same work done
// with raw go-redis commands on the same go-redis client settings (the floor), run alternately.
type objResult struct {
	Rows   []objRow `json:"rows"`
	Errors int64    `json:"errors"`
}

type objRow struct {
	Op         string  `json:"op"`
	Goroutines int     `json:"goroutines"`
	Batch      int     `json:"batch"`
	Unit       string  `json:"unit"`
	Ours       float64 `json:"ours_per_sec"`
	Raw        float64 `json:"raw_per_sec"`
	Ratio      float64 `json:"ratio"`
	RawCmds    string  `json:"raw_commands"`
}

// bloomN and bloomP size the filter of the scenario: 7 hash functions.
const (
	bloomN = 10_000_000
	bloomP = 0.01
)

// objBench runs the data objects scenario, each measurement for d, rounds times alternately.
func objBench(ctx context.Context, addr string, d time.Duration, rounds int) (*objResult, error) {
	rdb := redis.NewClient(goRedisOptions(addr))
	defer rdb.Close()
	c, err := redisson.New(rdb)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res := &objResult{}
	bf := c.BloomFilter("bench:bloom")
	if _, err := bf.TryInit(ctx, bloomN, bloomP); err != nil {
		return nil, err
	}
	bits, hashes, _ := redisson.BloomSize(bloomN, bloomP)
	var errCount atomic.Int64
	counter := c.AtomicLong("bench:atomic")
	type scen struct {
		op, unit, rawCmds string
		goroutines, batch int
		ours, raw         func(g int, seq int64) error
	}
	elems := func(prefix string, g int, seq int64, batch int) []string {
		out := make([]string, batch)
		for i := range out {
			out[i] = prefix + strconv.Itoa(g) + ":" + strconv.FormatInt(seq*int64(batch)+int64(i), 10)
		}
		return out
	}
	rawBits := func(cmd string, prefix string, g int, seq int64, batch int) error {
		p := rdb.Pipeline()
		var buf []byte
		for _, e := range elems(prefix, g, seq, batch) {
			buf = bloomIndices(buf[:0], e, uint64(bits), hashes)
			for j := 0; j < len(buf); j += 4 {
				i := int64(binary.BigEndian.Uint32(buf[j:]))
				if cmd == "setbit" {
					p.SetBit(ctx, "bench:raw-bloom", i, 1)
				} else {
					p.GetBit(ctx, "bench:raw-bloom", i)
				}
			}
		}
		_, err := p.Exec(ctx)
		return err
	}
	var sc []scen
	for _, g := range []int{1, 16} {
		sc = append(sc, scen{op: "AtomicLong.Add", unit: "ops", rawCmds: "INCRBY", goroutines: g, batch: 1,
			ours: func(int, int64) error { _, err := counter.Add(ctx, 1); return err },
			raw:  func(int, int64) error { return rdb.IncrBy(ctx, "bench:raw-atomic", 1).Err() }})
	}
	for _, batch := range []int{1, 1000} {
		g := 16
		if batch > 1 {
			g = 4
		}
		sc = append(sc,
			scen{op: "BloomFilter.AddMany", unit: "elements", rawCmds: fmt.Sprintf("pipeline of %d SETBIT", batch*hashes), goroutines: g, batch: batch,
				ours: func(g int, seq int64) error { _, err := bf.AddMany(ctx, elems("a", g, seq, batch)); return err },
				raw:  func(g int, seq int64) error { return rawBits("setbit", "a", g, seq, batch) }},
			scen{op: "BloomFilter.ContainsMany", unit: "elements", rawCmds: fmt.Sprintf("pipeline of %d GETBIT", batch*hashes), goroutines: g, batch: batch,
				// Elements the add rows added (seq modulo 50): all k bits are read.
				ours: func(g int, seq int64) error { _, err := bf.ContainsMany(ctx, elems("a", g, seq%50, batch)); return err },
				raw:  func(g int, seq int64) error { return rawBits("getbit", "a", g, seq%50, batch) }})
	}
	run := func(s scen, f func(int, int64) error) float64 {
		var done atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(d)
		start := time.Now()
		for g := range s.goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := int64(0); time.Now().Before(stop) && ctx.Err() == nil; seq++ {
					if err := f(g, seq); err != nil {
						errCount.Add(1)
						continue
					}
					done.Add(int64(s.batch))
				}
			}()
		}
		wg.Wait()
		return float64(done.Load()) / time.Since(start).Seconds()
	}
	for _, s := range sc {
		var ours, raw float64
		for r := range rounds {
			if r%2 == 0 {
				ours += run(s, s.ours)
				raw += run(s, s.raw)
			} else {
				raw += run(s, s.raw)
				ours += run(s, s.ours)
			}
		}
		row := objRow{Op: s.op, Goroutines: s.goroutines, Batch: s.batch, Unit: s.unit, RawCmds: s.rawCmds,
			Ours: ours / float64(rounds), Raw: raw / float64(rounds)}
		if row.Raw > 0 {
			row.Ratio = row.Ours / row.Raw
		}
		logf("objects: %s × %d goroutines, batch %d: %.0f vs raw %.0f %s/s (%.2f)", s.op, s.goroutines, s.batch, row.Ours, row.Raw, s.unit, row.Ratio)
		res.Rows = append(res.Rows, row)
	}
	res.Errors = errCount.Load()
	if res.Errors > 0 {
		return res, errors.New("objects scenario: " + strconv.FormatInt(res.Errors, 10) + " errors")
	}
	return res, nil
}

// bloomIndices appends the bit indices of e as the library computes them (see BloomFilter): XXH3-128,
// then enhanced double hashing, 4 bytes each, big-endian.
func bloomIndices(dst []byte, e string, m uint64, k int) []byte {
	h := xxh3.HashString128(e)
	x, y := h.Lo%m, h.Hi%m
	for i := range k {
		dst = binary.BigEndian.AppendUint32(dst, uint32(x))
		x = (x + y) % m
		y = (y + uint64(i)) % m
	}
	return dst
}

func printObj(w io.Writer, r *objResult) {
	fmt.Fprintf(w, "\n### Data objects against raw go-redis\n\n")
	fmt.Fprintf(w, "One go-redis client (default pool) per side; each row alternates the two sides; the raw side computes the same bit indices.\n\n")
	fmt.Fprintf(w, "| operation | goroutines | batch | ours /s | raw /s | ratio | raw commands |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %d | %d | %.0f %s | %.0f | %.2f | %s |\n", row.Op, row.Goroutines, row.Batch, row.Ours, row.Unit, row.Raw, row.Ratio, row.RawCmds)
	}
	for _, row := range r.Rows {
		fmt.Fprintf(w, "RESULT scenario=objects op=%s goroutines=%d batch=%d ours_per_sec=%.1f raw_per_sec=%.1f ratio=%.3f\n",
			row.Op, row.Goroutines, row.Batch, row.Ours, row.Raw, row.Ratio)
	}
	fmt.Fprintln(w)
}
