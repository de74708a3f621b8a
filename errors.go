package redisson

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Errors returned by this package. Match them with errors.Is: they arrive inside an *Error that names
// the operation and the object, often together with the underlying cause.
var (
	// ErrNotObtained: an acquisition failed and nothing is held. Every acquisition error matches it,
	// whatever the cause: contention (then also ErrBusy), the caller's context (ctx.Err()), Close
	// (ErrClosed), bad input (ErrInvalidArgument), another kind of value under the name
	// (ErrWrongType), too few replicas (ErrNotReplicated), or a Redis or network error (wrapped).
	ErrNotObtained = errors.New("redisson: not obtained")

	// ErrBusy: an acquisition failed, or its wait ended, because what it wanted was taken: the lock
	// held by another owner (or, for a single attempt, held or awaited by another goroutine of the
	// same Client), or too few permits available. It comes with ErrNotObtained, and with ctx.Err()
	// when the caller's context ended the wait. It never means that Redis failed: an acquisition
	// whose latest attempt got no answer (Redis paused, unreachable, black-holed) does not match it.
	// Retry on ErrBusy; alert on the others.
	ErrBusy = errors.New("redisson: busy")

	// ErrNotHeld: the caller does not hold what it tried to release or re-enter (already unlocked, or
	// lost: then the error also matches ErrLockLost). Nothing was changed.
	ErrNotHeld = errors.New("redisson: not held")

	// ErrLockLost: a lock this process held is no longer held: the watchdog found it gone or could not
	// renew it before its lease may have lapsed, its fixed lease ran out, an unlock failed, or the
	// Client was closed. It is the cause of the hold's context cancellation (read it with
	// context.Cause). A PermitExpirableSemaphore's leased permit lost the same way (or whose Release
	// failed) is reported with it too, as the cause of HeldPermits.Context: there is no separate
	// sentinel for permits.
	ErrLockLost = errors.New("redisson: lock lost")

	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("redisson: client closed")

	// ErrWrongType: the name is used in Redis by a value of another type or format (another kind of
	// object, or application data). Nothing was changed.
	ErrWrongType = errors.New("redisson: key holds a value of another type")

	// ErrNotReplicated: in the replica-acknowledged mode (WithReplicaAcks), fewer replicas than
	// required acknowledged a mutation in time. An acquisition that fails so was undone; a hold lost
	// so was not renewed on enough replicas.
	ErrNotReplicated = errors.New("redisson: not acknowledged by enough replicas")

	// ErrNoWait: the replica-acknowledged mode is on but the master refuses the WAIT command, so no
	// acknowledgement can be had (see WithReplicaAcks and Client.CheckReplicas).
	ErrNoWait = errors.New("redisson: server has no WAIT command")

	// ErrEvicting: a master runs a maxmemory-policy that evicts keys when memory runs out. Under a
	// volatile-* policy lock keys (which have TTLs) are the first evicted, so an evicted lock lets a
	// second owner in; under allkeys-* a FencedLock's counter can be evicted and its tokens restart.
	// Client.CheckEviction reports it; a FencedLock refuses to be acquired on an allkeys-* master.
	// Set maxmemory-policy noeviction on servers that hold locks.
	ErrEvicting = errors.New("redisson: the server evicts keys")

	// ErrOutOfRange: the result of an operation would not fit its type (an AtomicLong added past
	// the int64 range). Nothing was changed.
	ErrOutOfRange = errors.New("redisson: result out of range")

	// ErrNotInitialized: the object must be initialized first (a BloomFilter's TryInit). Nothing was
	// changed.
	ErrNotInitialized = errors.New("redisson: object not initialized")

	// ErrConfigMismatch: the object exists with another configuration (a BloomFilter initialized with
	// other parameters). Nothing was changed.
	ErrConfigMismatch = errors.New("redisson: object exists with another configuration")

	// ErrInvalidArgument: bad input (empty or malformed name, out-of-range duration, nil client,
	// context or handle). Nothing was sent to Redis.
	ErrInvalidArgument = errors.New("redisson: invalid argument")

	// ErrOutcomeUnknown: a Semaphore, PermitExpirableSemaphore or CountDownLatch change whose reply
	// was lost, and whose re-sent copy found no record of the first: the change was applied once or
	// not at all, never twice, and may still be applied by a copy landing later (a release, a count
	// down). An acquisition is then undone, and reports ErrNotObtained too: a copy of it landing up to
	// 20 minutes later takes nothing (see Semaphore for what remains).
	ErrOutcomeUnknown = errors.New("redisson: outcome unknown")
)

// Error is the error returned by every operation on an object, like os.PathError: which operation
// failed on which object, and why. Err matches one or more of the package's sentinel errors and the
// underlying cause (a context error, a Redis error).
type Error struct {
	Op   string // "lock", "try lock", "reenter", "unlock", "force unlock", ...
	Name string // the object's name as given to the Client
	Err  error
}

// Error returns "redisson: <op> "<name>": <reasons>" ("<nil>" for a nil *Error).
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return "redisson: " + e.Op + " " + strconv.Quote(e.Name) + ": " + describe(e.Err)
}

// Unwrap returns the reasons (nil for a nil *Error).
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// reasons is a list of errors that together explain a failure, most general first: e.g.
// ErrNotObtained, then context.DeadlineExceeded. It matches each of them.
type reasons []error

func (r reasons) Error() string   { return describe(r) }
func (r reasons) Unwrap() []error { return r }

// because joins the non-nil errors into one that matches each of them; nested lists are flattened.
func because(errs ...error) error {
	var r reasons
	for _, err := range errs {
		if nested, ok := err.(reasons); ok {
			r = append(r, nested...)
		} else if err != nil {
			r = append(r, err)
		}
	}
	if len(r) == 1 {
		return r[0]
	}
	return r
}

// describe writes err without the package prefix of its parts, so that a list of reasons reads
// "not obtained: client closed" rather than repeating "redisson: ".
func describe(err error) string {
	if r, ok := err.(reasons); ok {
		parts := make([]string, len(r))
		for i, e := range r {
			parts[i] = describe(e)
		}
		return strings.Join(parts, ": ")
	}
	if err == nil {
		return "<nil>"
	}
	return strings.TrimPrefix(err.Error(), "redisson: ")
}

// busyErr returns a reason of contention (see ErrBusy): its message says what was taken, and it
// matches ErrBusy. Each call makes a distinct, comparable error value.
func busyErr(msg string) error { return &busy{msg} }

type busy struct{ msg string }

func (e *busy) Error() string { return e.msg }
func (e *busy) Unwrap() error { return ErrBusy }

func opErr(op, name string, errs ...error) error {
	return &Error{Op: op, Name: name, Err: because(errs...)}
}

// unsupportedf is the error of a call that the Client's mode does not offer: it matches
// errors.ErrUnsupported.
func unsupportedf(format string, args ...any) error {
	return because(errors.ErrUnsupported, fmt.Errorf(format, args...))
}

func invalidf(format string, args ...any) error {
	return because(ErrInvalidArgument, fmt.Errorf(format, args...))
}

// redisErr explains an error from Redis: WRONGTYPE (including a string in a format this package did
// not write) matches ErrWrongType. An error that matches it already is returned as it is (explained
// once: its message says so once).
func redisErr(err error) error {
	if err != nil && !errors.Is(err, ErrWrongType) && strings.Contains(err.Error(), "WRONGTYPE") {
		return wrongType{err}
	}
	return err
}

// wrongType is a WRONGTYPE error from Redis, told in the library's words (ErrWrongType's): the
// reply, which names the failing script and its line, is wrapped, not shown.
type wrongType struct{ reply error }

func (e wrongType) Error() string   { return ErrWrongType.Error() }
func (e wrongType) Unwrap() []error { return []error{ErrWrongType, e.reply} }

// errPrefix reports whether err is a Redis error reply starting with prefix. (redis.HasErrorPrefix
// allocates even for a nil error: this is called on every reply.)
func errPrefix(err error, prefix string) bool {
	return err != nil && redis.HasErrorPrefix(err, prefix)
}
