package redisson

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by this package. Match them with errors.Is: most are wrapped with the object's name
// and the underlying cause.
var (
	// ErrNotObtained: an acquisition failed and nothing is held. Every acquisition error matches it;
	// when the caller's context ended the wait, the error also matches ctx.Err().
	ErrNotObtained = errors.New("redisson: not obtained")

	// ErrNotHeld: the caller does not own what it tried to release. Nothing was changed.
	ErrNotHeld = errors.New("redisson: not held")

	// ErrLockLost: a lock this process held is no longer held: the watchdog found it gone or could not
	// renew it before its lease may have lapsed, or its fixed lease ran out. It is the cause of the
	// ownership context's cancellation (read it with context.Cause).
	ErrLockLost = errors.New("redisson: lock lost")

	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("redisson: client closed")

	// ErrWrongType: the name is used in Redis by a value of another type. Nothing was changed.
	ErrWrongType = errors.New("redisson: key holds a value of another type")

	// ErrInvalidArgument: bad input (empty name, non-positive duration, nil client or context). Nothing
	// was sent to Redis.
	ErrInvalidArgument = errors.New("redisson: invalid argument")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// redisErr wraps an error from Redis with the operation and object name, mapping WRONGTYPE.
func redisErr(op, name string, err error) error {
	if err != nil && strings.Contains(err.Error(), "WRONGTYPE") {
		return fmt.Errorf("%w: %s %q: %w", ErrWrongType, op, name, err)
	}
	return fmt.Errorf("redisson: %s %q: %w", op, name, err)
}

// notObtained wraps the reason an acquisition of name failed.
func notObtained(name string, cause error) error {
	return fmt.Errorf("%w: %q: %w", ErrNotObtained, name, cause)
}
