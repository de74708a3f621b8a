package javadouble

import (
	"context"
	_ "embed"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/lock_renew.lua
	lockRenewSrc string
	lockRenew    = redis.NewScript(lockRenewSrc)

	//go:embed lua/rw_read_renew.lua
	readRenewSrc string
	readRenew    = redis.NewScript(readRenewSrc)
)

// renewEntry is the registration of one lock key in a renewal task (Redisson's LockEntry /
// ReadLockEntry): one thread id per acquisition, in order, and each thread's owner field.
type renewEntry struct {
	prefix string // read locks: the key prefix {name} of the per-acquisition timeout keys
	tids   []int64
	owners map[int64]string
}

// renewTask is one of Redisson's renewal tasks (LockTask, or ReadLockTask when read is set): one
// timer, armed at watchdog/3 by the first registration and re-armed after each complete pass while
// anything is registered.
type renewTask struct {
	c    *Client
	read bool

	mu      sync.Mutex
	entries map[string]*renewEntry
	running bool
}

// add registers one acquisition of key by tid (owner field owner) and arms the timer if needed.
func (t *renewTask) add(key, prefix string, tid int64, owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[key]
	if e == nil {
		e = &renewEntry{prefix: prefix, owners: map[int64]string{}}
		t.entries[key] = e
	}
	e.tids = append(e.tids, tid)
	e.owners[tid] = owner
	if !t.running && t.c.goroutine(t.loop) {
		t.running = true
	}
}

// cancel removes one acquisition of key by tid (all of key's registrations if all is set).
func (t *renewTask) cancel(key string, tid int64, all bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[key]
	if e == nil {
		return
	}
	if all {
		delete(t.entries, key)
		return
	}
	i := slices.Index(e.tids, tid)
	if i < 0 {
		return
	}
	e.tids = slices.Delete(e.tids, i, i+1)
	if !slices.Contains(e.tids, tid) {
		delete(e.owners, tid)
	}
	if len(e.tids) == 0 {
		delete(t.entries, key)
	}
}

func (t *renewTask) loop() {
	for {
		timer := time.NewTimer(t.c.watchdog / 3)
		select {
		case <-t.c.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		t.pass(t.c.ctx)
		t.mu.Lock()
		if len(t.entries) == 0 {
			t.running = false
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}

type renewItem struct {
	key    string
	e      *renewEntry
	owners []string
}

// pass renews every registered key, chunk by chunk (one slot per chunk on a Cluster), one EVAL at a
// time; an error aborts the rest of the pass. A key whose owner is gone is de-registered.
func (t *renewTask) pass(ctx context.Context) {
	t.mu.Lock()
	var items []renewItem
	for key, e := range t.entries {
		it := renewItem{key: key, e: e}
		if t.read {
			for _, tid := range e.tids {
				if o := e.owners[tid]; !slices.Contains(it.owners, o) {
					it.owners = append(it.owners, o)
				}
			}
		} else {
			it.owners = []string{e.owners[e.tids[0]]}
		}
		items = append(items, it)
	}
	t.mu.Unlock()
	var chunks [][]renewItem
	if t.c.cluster != nil {
		bySlot := map[int][]renewItem{}
		for _, it := range items {
			s := keySlot(it.key)
			bySlot[s] = append(bySlot[s], it)
		}
		for _, s := range slices.Sorted(maps.Keys(bySlot)) {
			chunks = append(chunks, chunk(bySlot[s])...)
		}
	} else {
		chunks = chunk(items)
	}
	for _, ch := range chunks {
		var keys []string
		args := []any{ms(t.c.watchdog)}
		script := lockRenew
		if t.read {
			script = readRenew
			for _, it := range ch {
				keys = append(keys, it.key, it.e.prefix)
				args = append(args, len(it.owners))
				for _, o := range it.owners {
					args = append(args, o)
				}
			}
		} else {
			for _, it := range ch {
				keys = append(keys, it.key)
				args = append(args, it.owners[0])
			}
		}
		res, err := script.Run(ctx, t.c.rdb, keys, args...).Int64Slice()
		if err != nil {
			return // Redisson logs "Can't update locks ... expiration" and waits for the next pass
		}
		t.mu.Lock()
		for i, r := range res {
			if r == 0 && i < len(ch) && t.entries[ch[i].key] == ch[i].e {
				delete(t.entries, ch[i].key)
			}
		}
		t.mu.Unlock()
	}
}

func chunk(items []renewItem) [][]renewItem {
	var out [][]renewItem
	for len(items) > 0 {
		n := min(batchSize, len(items))
		out = append(out, items[:n])
		items = items[n:]
	}
	return out
}

// keySlot is the Redis Cluster hash slot of key (CRC16/XMODEM of its hash tag, mod 16384).
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}
