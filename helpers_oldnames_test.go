package redisson_test

// Old names of shared helpers, still used by the test files that another branch is moving
// (attack9_test.go..attack19_test.go). Delete this file once those tests use the new names:
//
//	regressWait → recvWithin, regressAwait → awaitClosed, regressProxied → proxiedClient,
//	regressOneConn → oneIdleConn, regressGo → spawn, attackWarmUp → warmUpScripts,
//	a7SlotMaster → slotMaster.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

func regressWait[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	return recvWithin(t, ch, timeout, what)
}

func regressAwait(ctx context.Context, ch <-chan struct{}, d time.Duration) { awaitClosed(ctx, ch, d) }

func regressProxied(t *testing.T, srv *redistest.Server, p *redistest.Proxy, mod ...func(*redis.Options)) (*redis.Client, *heldDialer) {
	t.Helper()
	return proxiedClient(t, srv, p, mod...)
}

func regressOneConn(t *testing.T, rdb *redis.Client) {
	t.Helper()
	oneIdleConn(t, rdb)
}

func regressGo(wg *sync.WaitGroup, fn func()) { spawn(wg, fn) }

func attackWarmUp(t *testing.T, c *redisson.Client) {
	t.Helper()
	warmUpScripts(t, c)
}

func a7SlotMaster(t *testing.T, ctx context.Context, admin *redis.ClusterClient, key string) (string, int64) {
	t.Helper()
	return slotMaster(t, ctx, admin, key)
}
