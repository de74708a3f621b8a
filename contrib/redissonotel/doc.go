// Package redissonotel reports the events and statistics of redisson Clients through OpenTelemetry:
// a span per acquisition and per hold, and metrics.
//
// An Adapter records spans and metrics from the Client's event hook (redisson.WithEventHook), and
// reads the Stats of the Clients it watches whenever the meter's readers collect:
//
//	a, err := redissonotel.New() // the global TracerProvider and MeterProvider; or WithTracerProvider, WithMeterProvider
//	if err != nil { ... }
//	c, err := redisson.New(rdb, redisson.WithEventHook(a.Hook()))
//	if err != nil { ... }
//	unwatch, err := a.Watch(c, "orders") // Stats under redisson.client="orders"
//	if err != nil { ... }
//	defer unwatch()
//
//	h, err := c.Lock("order:42").Lock(ctx) // a "redisson.acquire lock" span, child of ctx's span
//	...
//	h.Unlock(ctx) // a "redisson.hold lock" span, child of ctx's span, from the acquisition to now
//
// The spans are recorded when the event happens, with their start set in the past (the event says
// how long the acquisition waited or the lock was held), so a hold costs nothing while it lasts;
// their parent is the span in the context of the acquiring call. The metrics are listed at New.
// Their attributes have few values: the object kind, the result, outcome or cause, and the label
// given to Watch. Lock names are on the spans but NOT on the metrics unless asked for, since an
// application that locks "order:<id>" would create time series per order: WithNameAttribute takes a
// function mapping names to a bounded set, WithNames an allow-list (every other name is "other").
//
// The hook runs synchronously on the Client's goroutines; the Adapter only records in memory (the
// SDK's exporters send in the background) and never blocks on I/O.
package redissonotel
