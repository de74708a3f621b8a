// Package redissonprom exports the events and statistics of redisson Clients as Prometheus
// metrics.
//
// A Collector counts acquisitions, failed acquisitions, releases, losses and hand-overs through the
// Client's event hook (redisson.WithEventHook), and reads the Stats of the Clients it watches when
// Prometheus scrapes it:
//
//	col := redissonprom.NewCollector()
//	prometheus.MustRegister(col)
//	c, err := redisson.New(rdb, redisson.WithEventHook(col.Hook()))
//	if err != nil { ... }
//	unwatch, err := col.Watch(c, "orders") // Stats under client="orders"
//	if err != nil { ... }
//	defer unwatch()
//	http.Handle("/metrics", promhttp.Handler())
//
// The metrics are listed at NewCollector. Their labels have few values: the object kind (lock,
// fair_lock, ..., permit_semaphore), the result or cause (acquired, busy, timeout, canceled, closed,
// error; expired, renewal_failed, lease_ended, closed, unlock_failed), the outcome of a hold
// (released, lost), and the label given to Watch. Lock names are NOT labels unless asked for, since
// an application that locks "order:<id>" would create a time series per order: WithNameLabel takes a
// function mapping names to a bounded set, WithNames an allow-list (every other name is "other").
//
// The hook runs synchronously on the Client's goroutines; the Collector's only updates in-memory
// counters and histograms, and never blocks on I/O. A scrape calls Stats, which does not block on I/O
// either.
//
// The module has a Grafana dashboard over these metrics (grafana/redisson.json) and an example that
// serves them from the flash-sale demo (example/flashsale).
package redissonprom
