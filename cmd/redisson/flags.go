package main

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/urfave/cli/v3"
)

// durationFlag is the CLI's flag of a duration: a Go duration ("5s", "250ms", "1m30s") or, as
// flock -w takes it, a bare number of seconds ("5", "0.5"). A negative one is a usage error.
// cmd.Duration reads it as it reads a cli.DurationFlag.
type durationFlag = cli.FlagBase[time.Duration, cli.NoConfig, secondsValue]

// secondsValue is the value of a durationFlag.
type secondsValue time.Duration

// Create makes the flag's value, stored at p and set to val (cli.ValueCreator).
func (secondsValue) Create(val time.Duration, p *time.Duration, _ cli.NoConfig) cli.Value {
	*p = val
	return (*secondsValue)(p)
}

// ToString formats d as the help shows a default (cli.ValueCreator).
func (secondsValue) ToString(d time.Duration) string { return d.String() }

// Set parses s (flag.Value).
func (v *secondsValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v = secondsValue(d)
	return nil
}

// Get returns the value, a time.Duration (flag.Getter).
func (v *secondsValue) Get() any { return time.Duration(*v) }

// String formats the value (flag.Value).
func (v *secondsValue) String() string { return time.Duration(*v).String() }

// bareNumber is a number of seconds without a unit: an integer or a decimal.
var bareNumber = regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)$`)

// goDuration is the syntax of a Go duration (time.ParseDuration): numbers with units.
var goDuration = regexp.MustCompile(`^[-+]?(([0-9]+\.?[0-9]*|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// parseDuration parses a Go duration or a bare number of seconds, refusing negative ones and those
// past time.Duration's range (about 292 years).
func parseDuration(s string) (time.Duration, error) {
	if bareNumber.MatchString(s) {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && goDuration.MatchString(s):
		return 0, fmt.Errorf("too large: at most %v", time.Duration(math.MaxInt64).Truncate(time.Second))
	case err != nil:
		return 0, errors.New("want seconds (5, 0.5) or a duration (5s, 250ms, 1m30s)")
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}
