package javadouble

import (
	_ "embed"
	"strconv"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/rw_read_acquire.lua
	rwReadAcquireSrc string
	rwReadAcquire    = redis.NewScript(rwReadAcquireSrc)

	//go:embed lua/rw_read_unlock.lua
	rwReadUnlockSrc string
	rwReadUnlock    = redis.NewScript(rwReadUnlockSrc)

	//go:embed lua/rw_write_acquire.lua
	rwWriteAcquireSrc string
	rwWriteAcquire    = redis.NewScript(rwWriteAcquireSrc)

	//go:embed lua/rw_write_unlock.lua
	rwWriteUnlockSrc string
	rwWriteUnlock    = redis.NewScript(rwWriteUnlockSrc)

	//go:embed lua/rw_force_unlock.lua
	rwForceUnlockSrc string
	rwForceUnlock    = redis.NewScript(rwForceUnlockSrc)
)

// ReadWriteLock is Redisson's RReadWriteLock: one HASH name with field mode (read/write), read
// holders "<uuid>:<tid>" -> count, the writer "<uuid>:<tid>:write" -> count; one STRING
// {name}:<uuid>:<tid>:rwlock_timeout:<n> per read acquisition; channel redisson_rwlock:{name}
// (read unlock publishes 0, write unlock 1).
type ReadWriteLock struct {
	c    *Client
	name string
}

// ReadWriteLock returns the read-write lock name (Redisson getReadWriteLock). It does not touch Redis.
func (c *Client) ReadWriteLock(name string) *ReadWriteLock { return &ReadWriteLock{c: c, name: name} }

// ReadLock returns a new read-lock object (as Java's readLock(), a new instance per call): shared
// with other readers and with the same thread's write lock (downgrade); renewed by the read-lock
// watchdog task.
func (rw *ReadWriteLock) ReadLock() *Lock { return rw.c.newLock(rw.name, readLock) }

// WriteLock returns a new write-lock object: exclusive, reentrant (re-entry extends the TTL by the
// lease), no read-to-write upgrade.
func (rw *ReadWriteLock) WriteLock() *Lock { return rw.c.newLock(rw.name, writeLock) }

// readTimeoutPrefix is {name}:<uuid>:<tid>:rwlock_timeout; acquisition n's key is prefix:n.
func (l *Lock) readTimeoutPrefix(tid int64) string {
	return suffixName(l.name, l.c.id+":"+strconv.FormatInt(tid, 10)+":rwlock_timeout")
}
