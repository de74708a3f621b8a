// Package wait is the one waiting engine of a Client: every blocking primitive waits through it.
//
// A waiting acquisition makes attempts (a script of its primitive) until one succeeds. An attempt
// that cannot succeed queues the waiter in the object's wait queue in Redis (internal/scripts
// wait_queue.lua): a release hands the resource straight to the head of that queue, in the release
// script, and wakes only that waiter, with a message naming it on its Client's channel. Meanwhile:
//
//   - the waiter is kept alive by heartbeats of the Client's renewal scheduler (a renew.Entry of the
//     primitive's waiter kind): a waiter whose process died is evicted after the waiter timeout;
//   - it sleeps until a message wakes it, the re-poll interval passes (or the retry time an attempt
//     that did not queue it gave, if shorter), or a heartbeat finds it no longer queued (served or
//     evicted): a lost message, a pub/sub reconnect (which wakes every waiter) or a failover delays
//     it by at most the re-poll interval;
//   - when the wait ends without success, the primitive undoes: it leaves the queue and gives back
//     whatever was handed to it meanwhile.
package wait

import (
	"context"
	"errors"
	"time"

	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/renew"
)

// ErrClosed is returned when the Client closes during a wait.
var ErrClosed = errors.New("client closed")

// Outcome is what one attempt found.
type Outcome struct {
	Acquired bool
	Queued   bool          // the waiter is in the object's queue in Redis: keep it alive
	Ticket   int64         // with Queued: the waiter's ticket in the queue (0 if the script gave none)
	Retry    time.Duration // how long the current holder may keep the resource; < 0 unknown
}

// Attempt makes one attempt. woken says what woke the waiter. An error ends the wait; the caller
// undoes what the attempt may have done.
type Attempt func(ctx context.Context, woken Woken) (Outcome, error)

// Woken tells an attempt about the message that woke the waiter, if one named it.
type Woken struct {
	// Message is the message that named the waiter ("" if it was woken otherwise: first attempt,
	// timer, reconnect, heartbeat): its id, and after a "|" whatever the release added.
	Message string
	// Ticket is the ticket the waiter's latest queued attempt returned, and Since when that attempt
	// was sent. A message that carries the same ticket was sent after that attempt ran in Redis: a
	// lease it announces is counted from no earlier than Since. A message with another ticket may
	// predate the latest attempt (it was read late) and proves nothing about the present.
	Ticket int64
	Since  time.Time
}

// Engine is a Client's waiting engine.
type Engine struct {
	Hub    *pubsub.Hub
	Sched  *renew.Scheduler
	Repoll time.Duration
	Closed <-chan struct{} // closed by Client.Close
}

// Waiter is one waiting acquisition.
type Waiter struct {
	Channel string // where the waiter is woken: its Client's channel for the object
	ID      string // its id in the queue, and the wake message naming it
	// Every: every message on Channel wakes the waiter, whatever it says (see
	// pubsub.Hub.SubscribeEvery): a waiter in no queue of this package, on a channel whose messages
	// another program defines. Such a waiter is never Queued.
	Every bool
	// Beat keeps the waiter alive while it is queued: Kind, Key (the queue's deadlines), Owner (ID),
	// Group and Lease (the waiter timeout) are set by the primitive; the engine sets the rest.
	Beat renew.Entry
}

// Wait makes attempts until one acquires, ctx ends, or the Client closes. It blocks. It returns nil
// on success; otherwise ctx.Err(), ErrClosed, or the attempt's error. On return the waiter is no
// longer subscribed nor kept alive; leaving the Redis queue is the caller's undo.
func (e *Engine) Wait(ctx context.Context, w *Waiter, attempt Attempt) error {
	var sub *pubsub.Waiter
	var timer *time.Timer // created at the first sleep: most acquisitions never sleep
	beating := false
	var kick chan struct{} // a heartbeat found the waiter no longer queued; made at the first wait
	w.Beat.Watchdog = true
	defer func() {
		if sub != nil {
			sub.Close()
		}
		if timer != nil {
			timer.Stop()
		}
		if beating {
			e.Sched.Remove(&w.Beat)
		}
	}()
	var woken Woken
	var ticket int64       // the latest queued attempt's ticket
	var queuedAt time.Time // when it was sent
	for {
		select {
		case <-e.Closed:
			return ErrClosed
		default:
		}
		sent := time.Now()
		out, err := attempt(ctx, woken)
		if err != nil || out.Acquired {
			return err
		}
		if err := ctx.Err(); err != nil {
			// The wait ended during the attempt (or before it: a caller may make its first attempt
			// on a context of its own): subscribe to nothing with a context that has ended.
			return err
		}
		if kick == nil { // most acquisitions never wait: they need neither
			kick = make(chan struct{}, 1)
			w.Beat.OnLost = func(error) {
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		}
		if out.Queued {
			ticket, queuedAt = out.Ticket, sent
			if !beating || !e.Sched.Active(&w.Beat) {
				if beating {
					e.Sched.Remove(&w.Beat)
				}
				if beating = e.Sched.Add(&w.Beat, sent); !beating {
					return ErrClosed
				}
			}
		}

		sleep := e.Repoll
		if out.Retry >= 0 && out.Retry < sleep {
			sleep = out.Retry
		}
		var wake <-chan struct{}
		if sub == nil {
			if w.Every {
				sub, err = e.Hub.SubscribeEvery(ctx, w.Channel)
			} else {
				sub, err = e.Hub.Subscribe(ctx, w.Channel, w.ID)
			}
			if err != nil {
				return ErrClosed
			}
			wake = sub.C
			if !sub.ReadyBefore(sent) {
				// Try again as soon as the subscription is confirmed (at once if it is already): a
				// message sent between the attempt and the confirmation does not reach this process
				// at all. (Once confirmed, a message naming the waiter that arrives before it
				// registers is held for it, and a "*" wakes it if it registers within Hold.)
				wake = sub.Ready()
			}
		} else {
			wake = sub.C
		}
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		woken = Woken{}
		select {
		case <-wake:
			if msg := sub.Message(); msg != "" {
				woken = Woken{Message: msg, Ticket: ticket, Since: queuedAt}
			}
		case <-kick:
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-e.Closed:
			return ErrClosed
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
