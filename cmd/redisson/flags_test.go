package main

import (
	"strings"
	"testing"
	"time"
)

// A duration flag takes a bare number of seconds (as flock -w does) or a Go duration, and refuses a
// negative one or anything else.
func TestDurationFlagTakesSecondsOrADuration(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]time.Duration{
		"5": 5 * time.Second, "0": 0, "0.5": 500 * time.Millisecond, ".25": 250 * time.Millisecond, "2.": 2 * time.Second,
		"+1": time.Second, "5s": 5 * time.Second, "250ms": 250 * time.Millisecond, "1m30s": 90 * time.Second, "0s": 0,
	} {
		var v secondsValue
		if err := v.Set(s); err != nil || time.Duration(v) != want {
			t.Errorf("Set(%q) = %v, %v; want %v", s, time.Duration(v), err, want)
		}
	}
	for _, s := range []string{"-1", "-0.5", "-1s", "x", "", "5 s", "1e3", "inf", "nan", "0x10", "5x"} {
		var v secondsValue
		if err := v.Set(s); err == nil {
			t.Errorf("Set(%q) = %v, nil; want an error", s, time.Duration(v))
		}
	}
}

// The duration flags of every command take seconds: a command line with them parses (and reaches
// the missing NAME); a negative one is a usage error naming the flag.
func TestDurationFlagsTakeSecondsOnTheCommandLine(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--watchdog", "2", "lock", "--wait", "5", "--lease", "0.5", "--grace", "1"},
		{"semaphore", "-n", "1", "--wait", "0.5", "--lease", "3", "--grace", "1"},
		{"latch", "wait", "--wait", "1.5"},
		{"watch", "--interval", "0.2"},
	} {
		if code, _, stderr := runInProcess(t, args...); code != exitUsage || !strings.Contains(stderr, "missing NAME") {
			t.Errorf("%q: exit %d, stderr %q; want the flags parsed and NAME missing", args, code, stderr)
		}
	}
	code, _, stderr := runInProcess(t, "lock", "--wait", "-5", "name", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, `invalid value "-5" for flag --wait: must not be negative`) {
		t.Errorf("--wait -5: exit %d, stderr %q; want a usage error", code, stderr)
	}
}

// The "too large" error gives the true maximum: every duration accepted is at most the bound it
// names (9223372036s, 2562047h47m16s, is accepted).
func TestDurationTooLargeNamesTheTrueMaximum(t *testing.T) {
	t.Parallel()
	var v secondsValue
	err := v.Set("9223372037s")
	if err == nil {
		t.Fatal("Set(9223372037s): no error")
	}
	_, bound, ok := strings.Cut(err.Error(), "at most ")
	max, perr := time.ParseDuration(bound)
	if !ok || perr != nil {
		t.Fatalf("Set(9223372037s): %v; want the maximum after \"at most \"", err)
	}
	for _, s := range []string{"9223372036s", "2562047h30m"} {
		if err := v.Set(s); err == nil && time.Duration(v) > max {
			t.Errorf("Set(%q) = %v, accepted, but the error of a too large one says at most %v", s, time.Duration(v), max)
		}
	}
}
