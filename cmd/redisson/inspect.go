package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/goredisson/redisson"
)

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show what a name holds: kind, holders, waiters, token, permits, count",
		ArgsUsage: "NAME",
		Description: `Reads, in one consistent snapshot on the master, what NAME holds (redisson.Client.Inspect):
its kind (lock, fair lock, fenced lock, spin lock, read-write lock, Java Redisson's lock, fair lock
or read-write lock, semaphore, permit semaphore, count-down latch, integer, hyperloglog, bloom
filter, string, other, or none), its holders with their hold counts and remaining leases, its
waiters (with how long ago they queued where the format records it), the fencing counter, the
permits and leases, the latch's count. An integer with nothing beside it is reported as
"integer": a Semaphore's permits, a latch's count and an AtomicLong share that format.

Each holder is named as far as its owner id and its Client's process record tell: a Go holder's
host, pid and program (from the record its Client keeps in Redis, unless made with
--no-process-record or redisson.WithoutProcessRecord) and how long ago its acquisition began
("taken ≤3.2s ago": it took the lock then, or later if it waited); a Java Redisson holder's
client UUID and thread id, e.g.
   holder:   6d6c1ca0231d5a2a3e138e4c:eb5p6729xvr4, 1 level(s), 29.9s left (host ci-7 pid 4242 prog deploy, taken ≤3.2s ago)

--json prints the same as one JSON object; durations are in milliseconds (-1: no expiry), times
in RFC 3339 (UTC).

Examples:
   redisson inspect deploy
   redisson inspect --json encoders | jq .leases`,
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: runInspect,
	}
}

func runInspect(ctx context.Context, cmd *cli.Command) error {
	name, err := nameArg(cmd, 1)
	if err != nil {
		return err
	}
	return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
		in, err := c.Inspect(ctx, name)
		if err != nil {
			return classify(ctx, rdb, err)
		}
		w := cmd.Root().Writer
		if cmd.Bool("json") {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(toJSON(in))
		}
		printInspection(w, in)
		return nil
	})
}

// jsonInspection is the --json form of an Inspection: durations in milliseconds.
type jsonInspection struct {
	Name         string       `json:"name"`
	Key          string       `json:"key"`
	Kind         string       `json:"kind"`
	RedisType    string       `json:"redisType"`
	TTLMs        int64        `json:"ttlMs"`
	Holders      []jsonHolder `json:"holders"`
	Waiters      []jsonWaiter `json:"waiters"`
	FencingToken int64        `json:"fencingToken"`
	Value        int64        `json:"value"`
	Leases       []jsonLease  `json:"leases"`
	Rounds       int64        `json:"rounds"`
}

type jsonHolder struct {
	Owner       string `json:"owner"`
	Levels      int    `json:"levels"`
	Side        string `json:"side,omitempty"`
	RemainingMs int64  `json:"remainingMs"`
	Token       int64  `json:"token,omitempty"`
	// Who holds (redisson.Holder): the owner id's client part and origin ("go", "java", or absent),
	// when a Go holder's acquisition began (RFC 3339, its clock) and how long before the snapshot,
	// a Java holder's thread id, and a Go holder's process from its Client's record.
	Client   string       `json:"client,omitempty"`
	Origin   string       `json:"origin,omitempty"`
	Since    *time.Time   `json:"since,omitempty"`
	AgeMs    int64        `json:"ageMs,omitempty"`
	ThreadID int64        `json:"threadId,omitempty"`
	Process  *jsonProcess `json:"process,omitempty"`
}

// jsonProcess is a redisson.Process.
type jsonProcess struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Program string    `json:"program"`
	Started time.Time `json:"started"`
}

type jsonWaiter struct {
	Owner     string `json:"owner"`
	Side      string `json:"side,omitempty"`
	Permits   int64  `json:"permits,omitempty"`
	AgeMs     int64  `json:"ageMs,omitempty"`
	ExpiresMs int64  `json:"expiresMs,omitempty"`
}

type jsonLease struct {
	ID          string `json:"id"`
	RemainingMs int64  `json:"remainingMs"`
}

func millis(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

func toJSON(in redisson.Inspection) jsonInspection {
	j := jsonInspection{Name: in.Name, Key: in.Key, Kind: string(in.Kind), RedisType: in.RedisType, TTLMs: millis(in.TTL),
		FencingToken: in.FencingToken, Value: in.Value, Rounds: in.Rounds,
		Holders: []jsonHolder{}, Waiters: []jsonWaiter{}, Leases: []jsonLease{}}
	for _, h := range in.Holders {
		jh := jsonHolder{Owner: h.Owner, Levels: h.Levels, Side: h.Side, RemainingMs: millis(h.Remaining), Token: h.Token,
			Client: h.Client, Origin: string(h.Origin), AgeMs: millis(h.Age), ThreadID: h.ThreadID}
		if !h.Since.IsZero() {
			since := h.Since.UTC()
			jh.Since = &since
		}
		if p := h.Process; p != nil {
			jh.Process = &jsonProcess{Host: p.Host, PID: p.PID, Program: p.Program, Started: p.Started.UTC()}
		}
		j.Holders = append(j.Holders, jh)
	}
	for _, w := range in.Waiters {
		j.Waiters = append(j.Waiters, jsonWaiter{Owner: w.Owner, Side: w.Side, Permits: w.Permits, AgeMs: millis(w.Age), ExpiresMs: millis(w.Expires)})
	}
	for _, l := range in.Leases {
		j.Leases = append(j.Leases, jsonLease{ID: l.ID, RemainingMs: millis(l.Remaining)})
	}
	return j
}

// human prints d rounded for reading ("never" for -1).
func human(d time.Duration) string {
	if d < 0 {
		return "never expires"
	}
	return d.Round(time.Millisecond).String()
}

// isLock reports whether k is a kind of lock.
func isLock(k redisson.Kind) bool {
	switch k {
	case redisson.KindLock, redisson.KindFairLock, redisson.KindFencedLock, redisson.KindSpinLock, redisson.KindReadWriteLock,
		redisson.KindRedissonLock, redisson.KindRedissonFairLock, redisson.KindRedissonReadWriteLock:
		return true
	}
	return false
}

// isInteger reports whether k is stored as an integer.
func isInteger(k redisson.Kind) bool {
	switch k {
	case redisson.KindInteger, redisson.KindSemaphore, redisson.KindPermitSemaphore, redisson.KindCountDownLatch:
		return true
	}
	return false
}

func printInspection(w io.Writer, in redisson.Inspection) {
	fmt.Fprintf(w, "name:     %s", in.Name)
	if in.Key != in.Name {
		fmt.Fprintf(w, " (key %s)", in.Key)
	}
	fmt.Fprintf(w, "\nkind:     %s\n", in.Kind)
	if in.Kind == redisson.KindNone {
		return
	}
	if in.TTL != 0 {
		fmt.Fprintf(w, "ttl:      %s\n", human(in.TTL))
	}
	if isLock(in.Kind) {
		if len(in.Holders) == 0 {
			fmt.Fprintln(w, "holders:  none (free)")
		}
		for _, h := range in.Holders {
			fmt.Fprintf(w, "holder:   %s", h.Owner)
			if h.Side != "" {
				fmt.Fprintf(w, " (%s)", h.Side)
			}
			fmt.Fprintf(w, ", %d level(s), %s left", h.Levels, human(h.Remaining))
			if h.Token != 0 {
				fmt.Fprintf(w, ", token %d", h.Token)
			}
			if who := identity(h); who != "" {
				fmt.Fprintf(w, " (%s)", who)
			}
			fmt.Fprintln(w)
		}
	}
	if in.Kind == redisson.KindFencedLock {
		fmt.Fprintf(w, "fencing:  last token issued %d\n", in.FencingToken)
	}
	switch in.Kind {
	case redisson.KindSemaphore, redisson.KindPermitSemaphore:
		fmt.Fprintf(w, "permits:  %d available\n", in.Value)
	case redisson.KindCountDownLatch:
		fmt.Fprintf(w, "count:    %d (reached zero %d time(s))\n", in.Value, in.Rounds)
	case redisson.KindInteger:
		fmt.Fprintf(w, "value:    %d (a Semaphore's permits, a CountDownLatch's count or an AtomicLong)\n", in.Value)
	}
	for _, l := range in.Leases {
		fmt.Fprintf(w, "lease:    %s, %s left\n", l.ID, human(l.Remaining))
	}
	if len(in.Waiters) > 0 || isLock(in.Kind) || isInteger(in.Kind) && in.Kind != redisson.KindInteger {
		fmt.Fprintf(w, "waiters:  %d\n", len(in.Waiters))
	}
	for i, wt := range in.Waiters {
		fmt.Fprintf(w, "  %d. %s", i+1, wt.Owner)
		if wt.Side != "" {
			fmt.Fprintf(w, " (%s)", wt.Side)
		}
		if wt.Permits != 0 {
			fmt.Fprintf(w, ", wants %d", wt.Permits)
		}
		if wt.Age > 0 {
			fmt.Fprintf(w, ", waiting %s", human(wt.Age))
		}
		fmt.Fprintln(w)
	}
}

// identity says who h is, as far as Inspect could tell: "host myhost pid 1234 prog deploy, taken
// ≤3.2s ago" for a Go holder (its acquisition began that long ago: it took the lock then or after
// waiting), "Java Redisson client <uuid>, thread 57" for a Java holder.
func identity(h redisson.Holder) string {
	var parts []string
	switch h.Origin {
	case redisson.OriginJava:
		return fmt.Sprintf("Java Redisson client %s, thread %d", h.Client, h.ThreadID)
	case redisson.OriginGo:
		if p := h.Process; p != nil {
			parts = append(parts, fmt.Sprintf("host %s pid %d prog %s", p.Host, p.PID, p.Program))
		} else {
			parts = append(parts, "Go client "+h.Client+", no process record")
		}
		if !h.Since.IsZero() {
			parts = append(parts, "taken ≤"+h.Age.Round(100*time.Millisecond).String()+" ago")
		}
	}
	return strings.Join(parts, ", ")
}

// who is the short form of identity, without times, for watch: "deploy@myhost:1234", "java:57".
func who(h redisson.Holder) string {
	switch {
	case h.Origin == redisson.OriginJava:
		return fmt.Sprintf("java:%d", h.ThreadID)
	case h.Process != nil:
		return fmt.Sprintf("%s@%s:%d", h.Process.Program, h.Process.Host, h.Process.PID)
	}
	return ""
}

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "print a line each time what a name holds changes, until interrupted",
		ArgsUsage: "NAME",
		Description: `Polls Inspect every --interval and prints a timestamped line each time the holders,
waiters, fencing token, permits, leases or count change (not when only the remaining times do).
A holder is followed by who it is where known: by=PROGRAM@HOST:PID (a Go holder's process record,
written just after its first acquisition: a line may follow when it appears), by=java:THREAD.
Stops on Ctrl-C (SIGINT) or SIGTERM, exit 0.

Example:
   redisson watch --interval 200ms deploy`,
		Flags:  []cli.Flag{&durationFlag{Name: "interval", Value: 500 * time.Millisecond, Usage: "time `D` between two reads"}},
		Action: runWatch,
	}
}

func runWatch(ctx context.Context, cmd *cli.Command) error {
	name, err := nameArg(cmd, 1)
	if err != nil {
		return err
	}
	every := cmd.Duration("interval")
	if every <= 0 {
		return usageError("watch: --interval must be positive")
	}
	return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
		sctx, stop := signal.NotifyContext(ctx, forwarded...)
		defer stop()
		w := cmd.Root().Writer
		last := ""
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			var line string
			in, err := c.Inspect(sctx, name)
			switch {
			case sctx.Err() != nil:
				return nil
			case err != nil:
				line = "error: " + err.Error()
			default:
				line = summary(in)
			}
			if line != last {
				if _, err := fmt.Fprintf(w, "%s %s\n", time.Now().Format("15:04:05.000"), line); err != nil {
					// Nobody reads any more (watch NAME | head -1): stop, exit 74.
					return exitf(exitIOErr, "watch: cannot write on stdout: %v", err)
				}
				last = line
			}
			select {
			case <-sctx.Done():
				return nil
			case <-t.C:
			}
		}
	})
}

// summary is one line of what in holds, without the times that change at every read.
func summary(in redisson.Inspection) string {
	var b strings.Builder
	b.WriteString(string(in.Kind))
	if isLock(in.Kind) {
		if len(in.Holders) == 0 {
			b.WriteString(" free")
		}
		for _, h := range in.Holders {
			fmt.Fprintf(&b, " holder=%s", h.Owner)
			if h.Side != "" {
				fmt.Fprintf(&b, "/%s", h.Side)
			}
			fmt.Fprintf(&b, "×%d", h.Levels)
			if h.Token != 0 {
				fmt.Fprintf(&b, " token=%d", h.Token)
			}
			if w := who(h); w != "" {
				fmt.Fprintf(&b, " by=%s", w)
			}
		}
	}
	if isInteger(in.Kind) {
		fmt.Fprintf(&b, " value=%d", in.Value)
	}
	if in.Kind == redisson.KindCountDownLatch {
		fmt.Fprintf(&b, " rounds=%d", in.Rounds)
	}
	if len(in.Leases) > 0 {
		ids := make([]string, len(in.Leases))
		for i, l := range in.Leases {
			ids[i] = l.ID
		}
		fmt.Fprintf(&b, " leases=%s", strings.Join(ids, ","))
	}
	if len(in.Waiters) > 0 {
		ws := make([]string, len(in.Waiters))
		for i, w := range in.Waiters {
			ws[i] = w.Owner
			if w.Side != "" {
				ws[i] += "/" + w.Side
			}
			if w.Permits != 0 {
				ws[i] += fmt.Sprintf("×%d", w.Permits)
			}
		}
		fmt.Fprintf(&b, " waiters=%d[%s]", len(ws), strings.Join(ws, " "))
	}
	return b.String()
}
