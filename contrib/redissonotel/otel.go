package redissonotel

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/goredisson/redisson"
)

// ScopeName is the instrumentation scope of the Adapter's tracer and meter.
const ScopeName = "github.com/goredisson/redisson/contrib/redissonotel"

// Attribute keys of the spans and metrics.
const (
	AttrObject     = attribute.Key("redisson.object")      // one of the redisson.Object constants
	AttrName       = attribute.Key("redisson.name")        // the object's name (spans; metrics only with WithNameAttribute or WithNames)
	AttrOutcome    = attribute.Key("redisson.outcome")     // acquired, not_obtained (acquire spans); released, lost (hold spans and the hold histogram)
	AttrResult     = attribute.Key("redisson.result")      // acquisitions and waits: acquired, or the cause of the failure
	AttrCause      = attribute.Key("redisson.cause")       // a failure's or loss's cause: one of the redisson.Cause constants
	AttrAttempts   = attribute.Key("redisson.attempts")    // acquire scripts run
	AttrHandedOver = attribute.Key("redisson.handed_over") // the lock was handed over by its releasing holder
	AttrPermits    = attribute.Key("redisson.permits")     // semaphores: permits acquired, wanted or lost
	AttrClient     = attribute.Key("redisson.client")      // the label given to Watch
	AttrErrorType  = attribute.Key("error.type")           // the cause, on spans with status Error
)

// Values of AttrOutcome and AttrResult.
const (
	OutcomeAcquired    = "acquired"
	OutcomeNotObtained = "not_obtained"
	OutcomeReleased    = "released"
	OutcomeLost        = "lost"
)

// DefaultWaitBuckets are the explicit bucket boundaries, in seconds, of the wait histogram: from
// 100µs to 30s.
var DefaultWaitBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// DefaultHoldBuckets are the explicit bucket boundaries, in seconds, of the hold histogram: from 1ms
// to 5 minutes.
var DefaultHoldBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
	10, 30, 60, 300}

// Option configures an Adapter: see New.
type Option func(*config)

type config struct {
	tp          trace.TracerProvider
	mp          metric.MeterProvider
	nameAttr    func(string) string
	waitBuckets []float64
	holdBuckets []float64
}

// WithTracerProvider sets where the spans go.
//
// default: otel.GetTracerProvider() when New is called
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where the metrics go.
//
// default: otel.GetMeterProvider() when New is called
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithNameAttribute adds the redisson.name attribute to the metrics of events, set to fn(the
// object's name). Every distinct value makes time series of its own, so fn must map the names to a
// small, bounded set. Spans always carry the name as it is. fn runs on the event hook: it must be
// quick.
//
// default: no name on metrics
func WithNameAttribute(fn func(name string) string) Option {
	return func(c *config) { c.nameAttr = fn }
}

// WithNames adds the redisson.name attribute (see WithNameAttribute) to the metrics of events: the
// object's name when it is one of names, "other" otherwise.
func WithNames(names ...string) Option {
	allowed := make(map[string]struct{}, len(names))
	for _, n := range names {
		allowed[n] = struct{}{}
	}
	return WithNameAttribute(func(name string) string {
		if _, ok := allowed[name]; ok {
			return name
		}
		return "other"
	})
}

// WithWaitBuckets sets the bucket boundaries (seconds, increasing) of the wait histogram.
//
// default: DefaultWaitBuckets
func WithWaitBuckets(b ...float64) Option {
	return func(c *config) { c.waitBuckets = b }
}

// WithHoldBuckets sets the bucket boundaries (seconds, increasing) of the hold histogram.
//
// default: DefaultHoldBuckets
func WithHoldBuckets(b ...float64) Option {
	return func(c *config) { c.holdBuckets = b }
}

// Adapter turns the events of redisson Clients into spans and metrics, and reports the Stats of the
// Clients it watches through observable instruments. Its methods are safe for concurrent use.
type Adapter struct {
	tracer   trace.Tracer
	meter    metric.Meter
	nameAttr func(string) string

	acquisitions metric.Int64Counter
	wait         metric.Float64Histogram
	hold         metric.Float64Histogram
	lost         metric.Int64Counter
	handovers    metric.Int64Counter

	holds, waiters, subscriptions                                metric.Int64ObservableUpDownCounter
	renewals, renewFailures, heartbeats, reconnects, ackFailures metric.Int64ObservableCounter

	attrs sync.Map // attribute sets of the event metrics, by their values (see measure)

	mu      sync.Mutex
	watched map[string]*watch // by client label
}

// New returns an Adapter that creates its tracer and meter (scope ScopeName) from the providers
// given, or the global ones. It fails only if the meter refuses to create an instrument. Its metrics:
//
//	redisson.acquisitions            counter {acquisition}: object, result (acquired or the cause of the failure)
//	redisson.acquire.wait.duration      histogram, s: time from the call to the outcome; object, result
//	redisson.lock.hold.duration      histogram, s: time held (locks only); object, outcome (released, lost)
//	redisson.holds.lost              counter {hold}: holds and leased permits lost; object, cause
//	redisson.handovers               counter {acquisition}: acquisitions handed over by the releasing holder; object
//	redisson.holds                   up-down counter {hold}: holds and leased permits kept alive (Stats.Held); client
//	redisson.waiters                 up-down counter {waiter}: acquisitions waiting (Stats.Waiting); client
//	redisson.renewals                counter {renewal}: lease renewals (Stats.Renewed); client
//	redisson.renewal.failures        counter {renewal}: failed renewals (Stats.RenewFailures); client
//	redisson.heartbeats              counter {heartbeat}: waiter heartbeats (Stats.Heartbeats); client
//	redisson.pubsub.subscriptions    up-down counter {channel}: channels subscribed (Stats.Subscriptions); client
//	redisson.pubsub.reconnects       counter {reconnect}: pub/sub reconnects (Stats.Reconnects); client
//	redisson.replica_ack.failures    counter {mutation}: mutations too few replicas acknowledged (Stats.AckFailures); client
//
// The attributes are the Attr constants (redisson.object, ...); the first five metrics get
// redisson.name too with WithNameAttribute or WithNames.
func New(opts ...Option) (*Adapter, error) {
	cfg := config{waitBuckets: DefaultWaitBuckets, holdBuckets: DefaultHoldBuckets}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	m := cfg.mp.Meter(ScopeName)
	a := &Adapter{tracer: cfg.tp.Tracer(ScopeName), meter: m, nameAttr: cfg.nameAttr}
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	a.acquisitions, err = m.Int64Counter("redisson.acquisitions", metric.WithUnit("{acquisition}"),
		metric.WithDescription("Acquisitions of locks and semaphores, by object kind and result: acquired, or the cause of the failure."))
	keep(err)
	a.wait, err = m.Float64Histogram("redisson.acquire.wait.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(cfg.waitBuckets...),
		metric.WithDescription("Time from an acquisition's call to its outcome, by object kind and result."))
	keep(err)
	a.hold, err = m.Float64Histogram("redisson.lock.hold.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(cfg.holdBuckets...),
		metric.WithDescription("Time a lock was held, from its acquisition to its release or loss, by object kind and outcome."))
	keep(err)
	a.lost, err = m.Int64Counter("redisson.holds.lost", metric.WithUnit("{hold}"),
		metric.WithDescription("Holds and leased permits that ended without an unlock, by object kind and cause."))
	keep(err)
	a.handovers, err = m.Int64Counter("redisson.handovers", metric.WithUnit("{acquisition}"),
		metric.WithDescription("Acquisitions handed the lock by its releasing holder, by object kind."))
	keep(err)
	a.holds, err = m.Int64ObservableUpDownCounter("redisson.holds", metric.WithUnit("{hold}"),
		metric.WithDescription("Holds and leased permits the Client keeps alive (Stats.Held)."))
	keep(err)
	a.waiters, err = m.Int64ObservableUpDownCounter("redisson.waiters", metric.WithUnit("{waiter}"),
		metric.WithDescription("Acquisitions of the Client waiting (Stats.Waiting)."))
	keep(err)
	a.subscriptions, err = m.Int64ObservableUpDownCounter("redisson.pubsub.subscriptions", metric.WithUnit("{channel}"),
		metric.WithDescription("Channels the Client's pub/sub hub is subscribed to (Stats.Subscriptions)."))
	keep(err)
	a.renewals, err = m.Int64ObservableCounter("redisson.renewals", metric.WithUnit("{renewal}"),
		metric.WithDescription("Lease renewals of holds and leased permits (Stats.Renewed)."))
	keep(err)
	a.renewFailures, err = m.Int64ObservableCounter("redisson.renewal.failures", metric.WithUnit("{renewal}"),
		metric.WithDescription("Lease renewals that failed and were retried while the lease lasted (Stats.RenewFailures)."))
	keep(err)
	a.heartbeats, err = m.Int64ObservableCounter("redisson.heartbeats", metric.WithUnit("{heartbeat}"),
		metric.WithDescription("Heartbeats of waiters queued in Redis (Stats.Heartbeats)."))
	keep(err)
	a.reconnects, err = m.Int64ObservableCounter("redisson.pubsub.reconnects", metric.WithUnit("{reconnect}"),
		metric.WithDescription("Reconnects of the Client's pub/sub connections (Stats.Reconnects)."))
	keep(err)
	a.ackFailures, err = m.Int64ObservableCounter("redisson.replica_ack.failures", metric.WithUnit("{mutation}"),
		metric.WithDescription("Mutations too few replicas acknowledged in time, in the replica-acknowledged mode (Stats.AckFailures)."))
	keep(err)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return a, nil
}

// Hook returns the function to pass to redisson.WithEventHook. For each event it records the
// metrics and ends a span that it starts in the past (the event carries how long the acquisition
// waited or the lock was held), with the span in the event's context as its parent:
//
//   - "redisson.acquire <object>" for an acquisition or a failed one, from the call to the outcome;
//     status Error when the cause is redisson.CauseError or CauseClosed (a busy lock, a wait bound
//     or a cancelled context are outcomes the caller asked for).
//   - "redisson.hold <object>" for a lock's hold, from its acquisition to its release or loss;
//     status Error for a loss, except a fixed lease (WithLease) that ran out, which is what the lease
//     was for (its cause attribute says lease_ended). A leased permit's loss has no hold span (its
//     start is not reported), only the metrics.
//
// The hook records in memory (the exporters send in the background): it never blocks on I/O. One
// Adapter's hook may serve several Clients.
func (a *Adapter) Hook() func(redisson.Event) { return a.observe }

func (a *Adapter) observe(e redisson.Event) {
	now := time.Now()
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	cause := e.Cause()
	switch e.Kind {
	case redisson.EventAcquired, redisson.EventNotObtained:
		result, outcome := OutcomeAcquired, OutcomeAcquired
		if e.Kind == redisson.EventNotObtained {
			result, outcome = cause, OutcomeNotObtained
		}
		opt := a.measure(e.Object, AttrResult, result, e.Name)
		a.acquisitions.Add(ctx, 1, opt)
		a.wait.Record(ctx, e.Wait.Seconds(), opt)
		if e.HandedOver {
			a.handovers.Add(ctx, 1, a.measure(e.Object, "", "", e.Name))
		}
		attrs := []attribute.KeyValue{AttrObject.String(e.Object), AttrName.String(e.Name), AttrOutcome.String(outcome),
			AttrAttempts.Int(e.Attempts), AttrHandedOver.Bool(e.HandedOver)}
		if cause != "" {
			attrs = append(attrs, AttrCause.String(cause))
		}
		if e.Permits != 0 {
			attrs = append(attrs, AttrPermits.Int64(e.Permits))
		}
		a.span(ctx, "redisson.acquire "+e.Object, now.Add(-e.Wait), now, attrs,
			cause == redisson.CauseError || cause == redisson.CauseClosed, cause, e.Err)
	case redisson.EventReleased, redisson.EventLost:
		outcome := OutcomeReleased
		if e.Kind == redisson.EventLost {
			outcome = OutcomeLost
			a.lost.Add(ctx, 1, a.measure(e.Object, AttrCause, cause, e.Name))
		}
		if !tracksHold(e.Object) {
			return
		}
		a.hold.Record(ctx, e.Held.Seconds(), a.measure(e.Object, AttrOutcome, outcome, e.Name))
		attrs := []attribute.KeyValue{AttrObject.String(e.Object), AttrName.String(e.Name), AttrOutcome.String(outcome)}
		if cause != "" {
			attrs = append(attrs, AttrCause.String(cause))
		}
		a.span(ctx, "redisson.hold "+e.Object, now.Add(-e.Held), now, attrs, e.Kind == redisson.EventLost && cause != redisson.CauseLeaseEnded, cause, e.Err)
	}
}

// span records a span that ran from start to end.
func (a *Adapter) span(ctx context.Context, name string, start, end time.Time, attrs []attribute.KeyValue, failed bool, cause string, err error) {
	_, s := a.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if failed {
		s.SetAttributes(AttrErrorType.String(cause))
		desc := cause
		if err != nil {
			desc = err.Error()
		}
		s.SetStatus(codes.Error, desc)
	}
	s.End(trace.WithTimestamp(end))
}

// tracksHold tells whether events of the object kind carry the time held: locks do, semaphores do
// not.
func tracksHold(object string) bool {
	return object != redisson.ObjectSemaphore && object != redisson.ObjectPermitSemaphore
}

// measure returns the attributes of an event metric: the object, key=value if key is set, and the
// name attribute if asked for. The sets are cached: their values are bounded.
func (a *Adapter) measure(object string, key attribute.Key, value, name string) metric.MeasurementOption {
	if a.nameAttr != nil {
		name = a.nameAttr(name)
	} else {
		name = ""
	}
	id := object + "\x00" + string(key) + "\x00" + value + "\x00" + name
	if o, ok := a.attrs.Load(id); ok {
		return o.(metric.MeasurementOption)
	}
	kvs := []attribute.KeyValue{AttrObject.String(object)}
	if key != "" {
		kvs = append(kvs, key.String(value))
	}
	if a.nameAttr != nil {
		kvs = append(kvs, AttrName.String(name))
	}
	o, _ := a.attrs.LoadOrStore(id, metric.WithAttributeSet(attribute.NewSet(kvs...)))
	return o.(metric.MeasurementOption)
}

// Watch registers a callback that reads client.Stats() whenever the meter's readers collect, and
// reports them with the attribute redisson.client=label, until the returned unwatch function is
// called (which unregisters it; calling it again does nothing). Reading Stats does not block on I/O.
// It returns an error for a nil client, a label already watched, or a meter that refuses the
// callback.
func (a *Adapter) Watch(client *redisson.Client, label string) (unwatch func(), err error) {
	if client == nil {
		return nil, errors.New("redissonotel: Watch of a nil client")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.watched[label]; dup {
		return nil, errors.New("redissonotel: client label " + label + " is already watched")
	}
	set := metric.WithAttributeSet(attribute.NewSet(AttrClient.String(label)))
	reg, err := a.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := client.Stats()
		o.ObserveInt64(a.holds, int64(s.Held), set)
		o.ObserveInt64(a.waiters, int64(s.Waiting), set)
		o.ObserveInt64(a.subscriptions, int64(s.Subscriptions), set)
		o.ObserveInt64(a.renewals, int64(s.Renewed), set)
		o.ObserveInt64(a.renewFailures, int64(s.RenewFailures), set)
		o.ObserveInt64(a.heartbeats, int64(s.Heartbeats), set)
		o.ObserveInt64(a.reconnects, int64(s.Reconnects), set)
		o.ObserveInt64(a.ackFailures, int64(s.AckFailures), set)
		return nil
	}, a.holds, a.waiters, a.subscriptions, a.renewals, a.renewFailures, a.heartbeats, a.reconnects, a.ackFailures)
	if err != nil {
		return nil, err
	}
	if a.watched == nil {
		a.watched = make(map[string]*watch)
	}
	w := &watch{reg}
	a.watched[label] = w
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.watched[label] == w {
				delete(a.watched, label)
			}
			_ = reg.Unregister()
		})
	}, nil
}

// watch is one Watch's registration.
type watch struct{ reg metric.Registration }
