package redisson

// Test-only access to internals, for the external test package (redisson_test).

// LockKeyOf returns the Redis key of lock name for Client c (with c's key prefix).
func LockKeyOf(c *Client, name string) string { return c.Lock(name).key }

// HistoryKeyOf returns the release history key of lock name for Client c.
func HistoryKeyOf(c *Client, name string) string { return c.Lock(name).releaseKeys[2] }

// ChannelOf returns the wake-up channel of lock name for Client c.
func ChannelOf(c *Client, name string) string { return c.Lock(name).releaseKeys[1] }

// OwnerOf returns the owner id of a hold, as stored in Redis.
func OwnerOf(h *Hold) string { return h.o.id }

// DecodeLockValue is decodeLockValue.
var DecodeLockValue = decodeLockValue
