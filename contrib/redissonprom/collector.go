package redissonprom

import (
	"errors"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/goredisson/redisson"
)

// DefaultWaitBuckets are the upper bounds, in seconds, of the buckets of the wait histogram: from
// 100µs (an uncontended acquisition on a nearby Redis) to 30s (a long queue).
var DefaultWaitBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// DefaultHoldBuckets are the upper bounds, in seconds, of the buckets of the hold histogram: from
// 1ms to 5 minutes.
var DefaultHoldBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
	10, 30, 60, 300}

// ResultAcquired is the result label of a successful acquisition; a failed one has its cause
// (redisson.CauseBusy, CauseTimeout, CauseCanceled, CauseClosed, CauseError).
const ResultAcquired = "acquired"

// Values of the outcome label of the hold histogram.
const (
	OutcomeReleased = "released"
	OutcomeLost     = "lost"
)

// Option configures a Collector: see NewCollector.
type Option func(*config)

type config struct {
	namespace   string
	nameLabel   func(string) string
	waitBuckets []float64
	holdBuckets []float64
	constLabels prometheus.Labels
}

// WithNamespace sets the prefix of every metric name, e.g. "myapp" for myapp_acquisitions_total.
// An empty namespace leaves the names unprefixed (acquisitions_total).
//
// default: "redisson"
func WithNamespace(ns string) Option {
	return func(c *config) { c.namespace = ns }
}

// WithNameLabel adds a "name" label to the metrics of events (acquisitions, waits, holds, losses,
// hand-overs), set to fn(the object's name). Every distinct value is a time series of its own per
// object kind and result, so fn must map the names to a small, bounded set (e.g. strip an id:
// "order:42" → "order", or fold the rest into "other"). Without this option (or WithNames) the
// metrics carry no names at all. fn runs on the event hook: it must be quick.
//
// default: no name label
func WithNameLabel(fn func(name string) string) Option {
	return func(c *config) { c.nameLabel = fn }
}

// WithNames adds a "name" label (see WithNameLabel) whose value is the object's name when it is
// one of names, and "other" for every other name.
func WithNames(names ...string) Option {
	allowed := make(map[string]struct{}, len(names))
	for _, n := range names {
		allowed[n] = struct{}{}
	}
	return WithNameLabel(func(name string) string {
		if _, ok := allowed[name]; ok {
			return name
		}
		return "other"
	})
}

// WithWaitBuckets sets the buckets (upper bounds in seconds, increasing) of the wait histogram.
//
// default: DefaultWaitBuckets
func WithWaitBuckets(b ...float64) Option {
	return func(c *config) { c.waitBuckets = b }
}

// WithHoldBuckets sets the buckets (upper bounds in seconds, increasing) of the hold histogram.
//
// default: DefaultHoldBuckets
func WithHoldBuckets(b ...float64) Option {
	return func(c *config) { c.holdBuckets = b }
}

// WithConstLabels adds labels with fixed values to every metric (e.g. {"service": "orders"}).
//
// default: none
func WithConstLabels(l prometheus.Labels) Option {
	return func(c *config) { c.constLabels = l }
}

// Collector is a prometheus.Collector of the events and Stats of redisson Clients: register it
// (prometheus.MustRegister(col)), pass col.Hook() to redisson.WithEventHook, and col.Watch each
// Client whose Stats it should read at scrape time. Its methods are safe for concurrent use.
type Collector struct {
	nameLabel func(string) string

	acquisitions *prometheus.CounterVec
	wait         *prometheus.HistogramVec
	hold         *prometheus.HistogramVec
	lost         *prometheus.CounterVec
	handovers    *prometheus.CounterVec

	holds, waiters, subscriptions                   *prometheus.Desc
	renewals, renewFailures, heartbeats, reconnects *prometheus.Desc
	ackFailures                                     *prometheus.Desc

	mu      sync.Mutex
	clients map[string]*redisson.Client // by client label
}

// NewCollector returns a Collector with the options applied. It exports (with the default
// namespace):
//
//	redisson_acquisitions_total{object,result}         counter: acquisitions, result "acquired" or the cause of the failure
//	redisson_acquire_wait_seconds{object,result}          histogram: time from the call to the outcome
//	redisson_lock_hold_seconds{object,outcome}         histogram: time held, outcome "released" or "lost" (locks only)
//	redisson_holds_lost_total{object,cause}            counter: holds and leased permits lost, by cause
//	redisson_handovers_total{object}                   counter: acquisitions handed over by the releasing holder
//	redisson_holds{client}                             gauge: holds and leased permits kept alive (Stats.Held)
//	redisson_waiters{client}                           gauge: acquisitions waiting (Stats.Waiting)
//	redisson_renewals_total{client}                    counter: lease renewals (Stats.Renewed)
//	redisson_renewal_failures_total{client}            counter: failed renewals (Stats.RenewFailures)
//	redisson_heartbeats_total{client}                  counter: waiter heartbeats (Stats.Heartbeats)
//	redisson_pubsub_subscriptions{client}              gauge: channels subscribed (Stats.Subscriptions)
//	redisson_pubsub_reconnects_total{client}           counter: pub/sub reconnects (Stats.Reconnects)
//	redisson_replica_ack_failures_total{client}        counter: mutations too few replicas acknowledged (Stats.AckFailures)
//
// object is one of the redisson.Object constants; the first five also get a "name" label with
// WithNameLabel or WithNames; client is the label given to Watch.
func NewCollector(opts ...Option) *Collector {
	cfg := config{namespace: "redisson", waitBuckets: DefaultWaitBuckets, holdBuckets: DefaultHoldBuckets}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	var extra []string
	if cfg.nameLabel != nil {
		extra = []string{"name"}
	}
	labels := func(l ...string) []string { return append(l, extra...) }
	ns, cl := cfg.namespace, cfg.constLabels
	c := &Collector{
		nameLabel: cfg.nameLabel,
		acquisitions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "acquisitions_total", ConstLabels: cl,
			Help: "Acquisitions of locks and semaphores, by object kind and result: acquired, or the cause of the failure (busy, timeout, canceled, closed, error)."},
			labels("object", "result")),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "acquire_wait_seconds", ConstLabels: cl, Buckets: cfg.waitBuckets,
			Help: "Time from an acquisition's call to its outcome, by object kind and result."},
			labels("object", "result")),
		hold: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "lock_hold_seconds", ConstLabels: cl, Buckets: cfg.holdBuckets,
			Help: "Time a lock was held, from its acquisition to its release or loss, by object kind and outcome (released, lost)."},
			labels("object", "outcome")),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "holds_lost_total", ConstLabels: cl,
			Help: "Holds and leased permits that ended without an unlock, by object kind and cause (expired, renewal_failed, lease_ended, closed, unlock_failed)."},
			labels("object", "cause")),
		handovers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "handovers_total", ConstLabels: cl,
			Help: "Acquisitions handed the lock by its releasing holder, by object kind."},
			labels("object")),
	}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help, []string{"client"}, cl)
	}
	c.holds = desc("holds", "Holds and leased permits the Client keeps alive (Stats.Held).")
	c.waiters = desc("waiters", "Acquisitions of the Client waiting (Stats.Waiting).")
	c.subscriptions = desc("pubsub_subscriptions", "Channels the Client's pub/sub hub is subscribed to (Stats.Subscriptions).")
	c.renewals = desc("renewals_total", "Lease renewals of holds and leased permits (Stats.Renewed).")
	c.renewFailures = desc("renewal_failures_total", "Lease renewals that failed and were retried while the lease lasted (Stats.RenewFailures).")
	c.heartbeats = desc("heartbeats_total", "Heartbeats of waiters queued in Redis (Stats.Heartbeats).")
	c.reconnects = desc("pubsub_reconnects_total", "Reconnects of the Client's pub/sub connections (Stats.Reconnects).")
	c.ackFailures = desc("replica_ack_failures_total", "Mutations too few replicas acknowledged in time, in the replica-acknowledged mode (Stats.AckFailures).")
	return c
}

// Hook returns the function to pass to redisson.WithEventHook. It updates counters and histograms in
// memory: it never blocks on I/O. One Collector's hook may serve several Clients.
func (c *Collector) Hook() func(redisson.Event) { return c.observe }

func (c *Collector) observe(e redisson.Event) {
	var name []string
	if c.nameLabel != nil {
		name = []string{c.nameLabel(e.Name)}
	}
	lv := func(l ...string) []string { return append(l, name...) }
	switch e.Kind {
	case redisson.EventAcquired:
		c.acquisitions.WithLabelValues(lv(e.Object, ResultAcquired)...).Inc()
		c.wait.WithLabelValues(lv(e.Object, ResultAcquired)...).Observe(e.Wait.Seconds())
		if e.HandedOver {
			c.handovers.WithLabelValues(lv(e.Object)...).Inc()
		}
	case redisson.EventNotObtained:
		cause := e.Cause()
		c.acquisitions.WithLabelValues(lv(e.Object, cause)...).Inc()
		c.wait.WithLabelValues(lv(e.Object, cause)...).Observe(e.Wait.Seconds())
	case redisson.EventReleased:
		if tracksHold(e.Object) {
			c.hold.WithLabelValues(lv(e.Object, OutcomeReleased)...).Observe(e.Held.Seconds())
		}
	case redisson.EventLost:
		c.lost.WithLabelValues(lv(e.Object, e.Cause())...).Inc()
		if tracksHold(e.Object) {
			c.hold.WithLabelValues(lv(e.Object, OutcomeLost)...).Observe(e.Held.Seconds())
		}
	}
}

// tracksHold tells whether events of the object kind carry the time held: locks do, semaphores
// (whose permits are not held by anyone in particular, or are lost one by one) do not.
func tracksHold(object string) bool {
	return object != redisson.ObjectSemaphore && object != redisson.ObjectPermitSemaphore
}

// Watch makes the Collector read client.Stats() at every scrape, reporting them with the label
// client=label, until the returned unwatch function is called (calling it again does nothing).
// Reading Stats does not block on I/O. Watching a closed Client reports zeros. It returns an error
// for a nil client or a label already being watched.
func (c *Collector) Watch(client *redisson.Client, label string) (unwatch func(), err error) {
	if client == nil {
		return nil, errors.New("redissonprom: Watch of a nil client")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.clients[label]; dup {
		return nil, errors.New("redissonprom: client label " + label + " is already watched")
	}
	if c.clients == nil {
		c.clients = make(map[string]*redisson.Client)
	}
	c.clients[label] = client
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.clients[label] == client {
				delete(c.clients, label)
			}
		})
	}, nil
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.acquisitions.Describe(ch)
	c.wait.Describe(ch)
	c.hold.Describe(ch)
	c.lost.Describe(ch)
	c.handovers.Describe(ch)
	for _, d := range c.statDescs() {
		ch <- d
	}
}

func (c *Collector) statDescs() []*prometheus.Desc {
	return []*prometheus.Desc{c.holds, c.waiters, c.subscriptions, c.renewals, c.renewFailures, c.heartbeats, c.reconnects, c.ackFailures}
}

// Collect implements prometheus.Collector: the event metrics, and the Stats of the watched Clients,
// read now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.acquisitions.Collect(ch)
	c.wait.Collect(ch)
	c.hold.Collect(ch)
	c.lost.Collect(ch)
	c.handovers.Collect(ch)

	c.mu.Lock()
	labels := make([]string, 0, len(c.clients))
	for l := range c.clients {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	stats := make([]redisson.Stats, len(labels))
	for i, l := range labels {
		stats[i] = c.clients[l].Stats()
	}
	c.mu.Unlock()
	for i, l := range labels {
		s := stats[i]
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l)
		}
		gauge(c.holds, float64(s.Held))
		gauge(c.waiters, float64(s.Waiting))
		gauge(c.subscriptions, float64(s.Subscriptions))
		counter(c.renewals, float64(s.Renewed))
		counter(c.renewFailures, float64(s.RenewFailures))
		counter(c.heartbeats, float64(s.Heartbeats))
		counter(c.reconnects, float64(s.Reconnects))
		counter(c.ackFailures, float64(s.AckFailures))
	}
}
