// Package sale is the buyer of the flash-sale demo (examples/flashsale), importable so that other
// programs (the /metrics example of contrib/redissonprom) run the same buyers: each takes a redisson
// lock around a deliberately non-atomic read-modify-write of the stock in Redis.
package sale

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
)

// LockName is the lock every buyer takes; GoodsKey is the stem of the stock and sold counter keys.
const (
	LockName = "goods:1000"
	GoodsKey = "goods:1000"
)

// StockKey and SoldKey are the keys of the stock and of the sold counter of a sale whose keys are
// under prefix.
func StockKey(prefix string) string { return prefix + GoodsKey + ":stock" }

// SoldKey: see StockKey.
func SoldKey(prefix string) string { return prefix + GoodsKey + ":sold" }

// Record is what one buyer did.
type Record struct {
	Buyer  int    `json:"buyer"`
	WaitNs int64  `json:"wait_ns"`          // from the Lock call to the acquisition; 0 with NoLock
	Seen   int64  `json:"seen"`             // the stock the buyer read
	Bought bool   `json:"bought,omitempty"` // it wrote stock-1 and counted a sale
	Seq    int64  `json:"seq,omitempty"`    // the sold counter's INCR reply: this purchase's number
	Err    string `json:"err,omitempty"`
}

// Sale is what the buyers of one process (or one redisson Client) share.
type Sale struct {
	Rdb               redis.Cmdable
	Lock              redisson.Locker
	StockKey, SoldKey string
	NoLock            bool // buyers skip the lock (to show the overselling it prevents)
}

// Buy is one buyer: lock, read the stock, and if there is any, take a moment (payment, say), write
// the stock back less one and count the sale; unlock. The read-modify-write is deliberately not
// atomic: only the lock keeps two buyers from selling the same item. It blocks until the buyer is
// done; failures are in the Record's Err.
func (s *Sale) Buy(ctx context.Context, id int) (r Record) {
	r.Buyer = id
	lctx := ctx
	if !s.NoLock {
		start := time.Now()
		owned, err := s.Lock.Lock(ctx)
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
	stock, err := s.Rdb.Get(lctx, s.StockKey).Int64()
	if err != nil {
		r.Err = "get stock: " + err.Error()
		return r
	}
	r.Seen = stock
	if stock <= 0 {
		return r // sold out: give up
	}
	time.Sleep(rand.N(time.Millisecond))
	if err := s.Rdb.Set(lctx, s.StockKey, stock-1, 0).Err(); err != nil {
		r.Err = "set stock: " + err.Error()
		return r
	}
	seq, err := s.Rdb.Incr(lctx, s.SoldKey).Result()
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
