package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/goredisson/redisson"
)

const exitCodesHelp = `EXIT STATUS:
   the command's exit status when it ran (128+N if signal N ended it);
   1   unlock --force: nothing was locked; latch set: the count was set already
   64  usage error (flags, arguments, a bad name)
   69  Redis unreachable, or a Redis error before the command ran
   70  the lock (or permits) was not held throughout the command: lost while it ran
       (it was terminated), or found lost by the release once it had exited
   74  what was to be printed on stdout could not be written (a closed pipe); lock
       without COMMAND then releases the lock at once
   75  EX_TEMPFAIL: not obtained within --wait, or at once with --wait 0 (flock exits 1
       there; lock and semaphore take -E N, as flock does, to exit N instead);
       latch wait: not zero within --wait
   126, 127  the command could not be run, or was not found
   128+N  the CLI was interrupted by signal N while waiting`

func newApp(stdout, stderr io.Writer) *cli.Command {
	app := &cli.Command{
		Name:  "redisson",
		Usage: "distributed locks, semaphores and latches on Redis from the shell (goredisson)",
		Description: `Runs commands under a distributed lock or semaphore permits, and inspects, force-unlocks
and watches what a name holds. Its objects are those of the Go package
github.com/goredisson/redisson, and Java Redisson's with --redisson-compat.

Examples:
   redisson lock deploy -- ./deploy.sh           # one deploy at a time, cluster-wide
   redisson --url redis://db:6379/0 lock --wait 10s nightly -- make report
   redisson semaphore -n 4 encoders -- ffmpeg -i in.mp4 out.webm
   redisson inspect deploy
   redisson unlock --force deploy

A duration D is a number of seconds (5, 0.5, as flock -w takes) or a Go duration (5s, 250ms, 1m30s).

Shell completion: source <(redisson completion bash)   (or zsh, fish; bash's works with or
without the bash-completion package)

` + exitCodesHelp,
		Writer:                          stdout,
		ErrWriter:                       stderr,
		EnableShellCompletion:           true,
		ConfigureShellCompletionCommand: configureCompletion,
		Flags:                           connectionFlags(),
		HideVersion:                     true,
		ExitErrHandler:                  func(context.Context, *cli.Command, error) {}, // run maps errors to exit codes
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usageError("unknown command %q", cmd.Args().First())
			}
			_ = cli.ShowRootCommandHelp(cmd)
			return &exitError{code: exitUsage}
		},
		// No help subcommand under each command (urfave/cli's, which took a NAME "help" or "h"
		// for itself): one help command, the root's, which takes a command's whole path.
		HideHelpCommand: true,
		Commands:        []*cli.Command{lockCommand(), semaphoreCommand(), inspectCommand(), unlockCommand(), latchCommand(), watchCommand(), helpCommand()},
	}
	usageHints(app)
	return app
}

func lockCommand() *cli.Command {
	return &cli.Command{
		Name:      "lock",
		Usage:     "run a command while holding a distributed lock (or hold it until a signal)",
		ArgsUsage: "NAME [-- COMMAND [ARGS...]]",
		Description: `Obtains the lock NAME (without --wait: waits for ever; --wait 0: one attempt), runs COMMAND
with stdin, stdout and stderr passed through, and unlocks when it exits. The watchdog renews the
lock while COMMAND runs (or --lease fixes its lease). COMMAND runs in a process group of its own,
and what it starts in the background runs under the lock too: redisson unlocks once no process is
left in the group. SIGINT, SIGTERM and SIGHUP received by redisson are passed on to the group (and
what is left of it after COMMAND exited gets SIGTERM, then SIGKILL after --grace). If the lock is
lost (deleted, expired, Redis unreachable until the lease may lapse, a --lease that ends),
COMMAND's group gets SIGTERM, then SIGKILL after --grace, and redisson exits 70. A loss no renewal
reported before COMMAND exited (a force-unlock: the watchdog renews every third of its timeout) is
found by the unlock: redisson exits 70 too, whatever COMMAND's status.

If redisson itself is killed (SIGKILL), its watchdog stops and the lock is free within the watchdog
timeout; on Linux COMMAND's group is SIGKILLed at once (a guard process, redisson's child, gets a
parent-death signal), so that nothing runs on without the lock. Elsewhere COMMAND can outlive a
killed redisson.

COMMAND's environment has REDISSON_LOCK_NAME, and with --fenced REDISSON_FENCING_TOKEN, the
acquisition's fencing token (strictly increasing), for the resource to check.

Put "--" before COMMAND when it has options of its own. A last argument
--generate-shell-completion makes the line a completion request (nothing runs), even after "--".

Without COMMAND (as etcdctl lock NAME), redisson obtains the lock, prints one line on stdout
(lock "NAME" held by owner ID, and with --fenced the fencing token), and holds it, renewed by the
watchdog, until SIGINT, SIGTERM or SIGHUP: it then unlocks and exits 0; exit 70 if the lock is lost
meanwhile.

Examples:
   redisson lock backup -- pg_dump -f /backups/db.sql mydb
   redisson lock --wait 0 cron:cleanup -- ./cleanup.sh || echo "another cleanup runs"
   redisson lock --fenced --lease 5m migrate -- sh -c './migrate --token "$REDISSON_FENCING_TOKEN"'
   redisson lock maintenance        # held until Ctrl-C`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fair", Usage: "a FairLock: first come, first served"},
			&cli.BoolFlag{Name: "fenced", Usage: "a FencedLock: REDISSON_FENCING_TOKEN in COMMAND's environment"},
			&cli.BoolFlag{Name: "spin", Usage: "a SpinLock: wait by polling instead of pub/sub"},
			&durationFlag{Name: "wait", DefaultText: "wait for ever", Usage: "give up after `D` (exit 75, or -E N); 0: one attempt"},
			conflictExitCodeFlag(),
			&durationFlag{Name: "lease", DefaultText: "none, the watchdog renews", Usage: "fixed lease `D` instead of the watchdog: reaching it while COMMAND runs is a loss"},
			&durationFlag{Name: "grace", Value: 10 * time.Second, Usage: "after a loss, time `D` between SIGTERM and SIGKILL"},
		},
		Action: runLock,
	}
}

// rawArgsKey is the key, in the root command's Metadata, of the command line as run got it.
const rawArgsKey = "redisson.args"

// endsWithDashes reports whether the command line ends with "--", which urfave/cli drops from the
// arguments.
func endsWithDashes(cmd *cli.Command) bool {
	raw, _ := cmd.Root().Metadata[rawArgsKey].([]string)
	return len(raw) > 0 && raw[len(raw)-1] == "--"
}

// command returns the command after NAME, or a usage error.
func command(cmd *cli.Command) ([]string, error) {
	args := cmd.Args().Slice()
	if len(args) < 2 {
		return nil, usageError("%s: missing COMMAND (usage: redisson %s %s)", cmd.Name, cmd.Name, cmd.ArgsUsage)
	}
	return args[1:], nil
}

// conflictExitCodeFlag is flock's -E: the exit code when the lock or permits are not obtained.
func conflictExitCodeFlag() cli.Flag {
	return &cli.IntFlag{Config: cli.IntegerConfig{Base: 10}, Name: "conflict-exit-code", Aliases: []string{"E"}, Value: exitNotObtained,
		Usage: "exit `N` (0 to 255) when not obtained: --wait passed, or held at once with --wait 0 (as flock -E; flock itself exits 1)"}
}

// conflictExitCode returns the command's -E, or a usage error if it is not in 0..255.
func conflictExitCode(cmd *cli.Command) (int, error) {
	n := cmd.Int("conflict-exit-code")
	if n < 0 || n > 255 {
		return 0, usageError("%s: --conflict-exit-code %d: must be in 0..255", commandName(cmd), n)
	}
	return n, nil
}

func acquireOpts(cmd *cli.Command) []redisson.AcquireOption {
	var opts []redisson.AcquireOption
	if cmd.IsSet("wait") {
		opts = append(opts, redisson.WithWait(cmd.Duration("wait")))
	}
	if cmd.IsSet("lease") {
		opts = append(opts, redisson.WithLease(cmd.Duration("lease")))
	}
	return opts
}

func runLock(ctx context.Context, cmd *cli.Command) error {
	name, err := nameArg(cmd, 0)
	if err != nil {
		return err
	}
	var argv []string // none: hold the lock until a signal
	switch {
	case cmd.NArg() > 1:
		argv = cmd.Args().Slice()[1:]
	case endsWithDashes(cmd):
		// "lock NAME --" asks for a command and gives none: not the same as no command.
		return usageError("lock: missing COMMAND after -- (usage: redisson lock %s)", cmd.ArgsUsage)
	}
	kinds := 0
	for _, f := range []string{"fair", "fenced", "spin"} {
		if cmd.Bool(f) {
			kinds++
		}
	}
	if kinds > 1 {
		return usageError("lock: --fair, --fenced and --spin exclude each other")
	}
	if _, err := conflictExitCode(cmd); err != nil {
		return err
	}
	return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
		var l redisson.Locker
		switch {
		case cmd.Bool("fair"):
			l = c.FairLock(name)
		case cmd.Bool("fenced"):
			l = c.FencedLock(name)
		case cmd.Bool("spin"):
			l = c.SpinLock(name)
		default:
			l = c.Lock(name)
		}
		return runHeld(ctx, cmd, rdb, "lock "+strconv.Quote(name), argv, func(sctx context.Context) (*held, error) {
			var h *redisson.Hold
			var err error
			if cmd.IsSet("wait") {
				h, err = l.TryLock(sctx, acquireOpts(cmd)...)
			} else {
				h, err = l.Lock(sctx, acquireOpts(cmd)...)
			}
			if err != nil {
				return nil, err
			}
			env := []string{"REDISSON_LOCK_NAME=" + name}
			if cmd.Bool("fenced") {
				env = append(env, "REDISSON_FENCING_TOKEN="+strconv.FormatInt(h.Token(), 10))
			}
			holding := fmt.Sprintf("lock %q held", name)
			if argv == nil {
				// The owner id, for inspect and unlock --force users to recognise the hold: the
				// lock's one holder is this hold.
				if in, err := c.Inspect(sctx, name); err == nil && len(in.Holders) == 1 {
					holding += " by owner " + in.Holders[0].Owner
				}
				if cmd.Bool("fenced") {
					holding += ", fencing token " + strconv.FormatInt(h.Token(), 10)
				}
			}
			return &held{what: fmt.Sprintf("lock %q", name), holding: holding, ctx: h.Context(), env: env, release: h.Unlock}, nil
		})
	})
}

// held is what a command runs under: a lock's hold or semaphore permits.
type held struct {
	what    string                          // for the loss message, e.g. `lock "x"`
	holding string                          // the line printed when held without a command
	ctx     context.Context                 // ends when the hold is lost (or released)
	env     []string                        // added to the command's environment
	release func(ctx context.Context) error // fails matching ErrNotHeld or ErrLockLost if not held any more; its errors name the operation (redisson: unlock "x": ...)
}

// runHeld obtains what obtain returns (a signal interrupts the wait: op names it in the message), runs
// argv under it (with no argv: holds it until a signal, see holdUntilSignal), terminating argv if it
// is lost, releases it, and returns the exit (see exitCodesHelp):
// exit 70 whenever it was not held throughout the command, whether the loss was signalled while the
// command ran (it was terminated), after it exited, or found by the release (a force-unlock or a
// removed lease that no renewal saw before the command ended). A release whose outcome is unknown
// (Redis unreachable) is reported on stderr and leaves the command's status.
func runHeld(ctx context.Context, cmd *cli.Command, rdb redis.UniversalClient, op string, argv []string, obtain func(sctx context.Context) (*held, error)) error {
	sctx, sigs, stop := catchSignals(ctx)
	defer stop()
	h, err := obtain(sctx)
	if err != nil {
		if e := sigs.interrupted(op); e != nil {
			return e
		}
		if errors.Is(err, redisson.ErrBusy) {
			code, _ := conflictExitCode(cmd) // checked before
			return exitf(code, "%v", err)
		}
		return classify(ctx, rdb, err)
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if e := sigs.interrupted(op); e != nil {
		// A signal as it was obtained: the command is not started.
		_ = h.release(uctx)
		return e
	}
	if argv == nil {
		return holdUntilSignal(sctx, cmd, h, uctx)
	}
	status, terminated, runErr := (&child{argv: argv, env: h.env, lost: h.ctx.Done(), grace: cmd.Duration("grace"),
		sigs: sigs, stderr: cmd.Root().ErrWriter}).run()
	// Until the release, the hold's context ends only on a loss: one signalled once the command had
	// exited (too late to terminate it) is a loss all the same.
	var lost error
	if h.ctx.Err() != nil {
		lost = context.Cause(h.ctx)
	}
	if err := h.release(uctx); err != nil {
		switch {
		case lost != nil: // the release fails because of the loss reported below
		case errors.Is(err, redisson.ErrNotHeld), errors.Is(err, redisson.ErrLockLost):
			lost = err // no renewal saw it before the command ended
		default:
			report(cmd.Root().ErrWriter, err)
		}
	}
	switch {
	case runErr != nil:
		return runErr
	case terminated:
		return exitf(exitLost, "%s lost while the command ran (%v); the command was terminated (status %d)",
			h.what, lost, status)
	case lost != nil:
		return exitf(exitLost, "%s lost while the command ran (%v); the command exited with status %d",
			h.what, lost, status)
	}
	return statusErr(status)
}

// holdUntilSignal prints h.holding on stdout and keeps h until a forwarded signal (SIGINT, SIGTERM,
// SIGHUP) cancels sctx, then releases it (with uctx) and returns nil: exit 0. A loss meanwhile, or
// one the release finds, is exit 70. A release whose outcome is unknown (Redis unreachable) is
// reported on stderr. If the line cannot be written (stdout closed), h is released at once: exit 74.
func holdUntilSignal(sctx context.Context, cmd *cli.Command, h *held, uctx context.Context) error {
	if _, err := fmt.Fprintln(cmd.Root().Writer, h.holding); err != nil {
		// Whoever waits for the line (a script reading stdout) would never learn the lock is held.
		if rerr := h.release(uctx); rerr != nil {
			report(cmd.Root().ErrWriter, rerr)
		}
		return exitf(exitIOErr, "%s: released at once: cannot write on stdout that it is held: %v", h.what, err)
	}
	select {
	case <-sctx.Done():
	case <-h.ctx.Done():
		err := context.Cause(h.ctx)
		_ = h.release(uctx)
		return exitf(exitLost, "%s lost while held (%v)", h.what, err)
	}
	if err := h.release(uctx); err != nil {
		if errors.Is(err, redisson.ErrNotHeld) || errors.Is(err, redisson.ErrLockLost) {
			return exitf(exitLost, "%s lost while held (%v)", h.what, err)
		}
		report(cmd.Root().ErrWriter, err)
	}
	return nil
}

// statusErr is the exit error of the command's status (nil for 0).
func statusErr(status int) error {
	if status == 0 {
		return nil
	}
	return &exitError{code: status}
}

func semaphoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "semaphore",
		Usage:     "run a command while holding semaphore permits",
		ArgsUsage: "NAME -- COMMAND [ARGS...]",
		Description: `Sets the semaphore NAME to -n permits if it was never set (TrySetPermits: every process
may pass -n; the first one sets it), takes --acquire permits (default 1; without --wait: waits for
ever; --wait 0: one attempt), runs COMMAND as "lock" does, and releases them when it exits.
-n is needed only to create the semaphore (a missing semaphore without -n is a usage error, exit
64); given for one that has another number of permits, it is not applied, and a line on stderr says
so. --acquire more than the semaphore's permits (available and leased) waits until others add
permits (a line on stderr says so): with --wait, not obtained says it asked for more than the
permits, exit 75 (or -E N).

The permits are leased (a PermitExpirableSemaphore): renewed by the watchdog while COMMAND runs, or
with the fixed lease --lease; so the permits of a killed redisson come back within the watchdog
timeout (plain Semaphore permits have no owner and would be lost for good), and a lost permit
(its lease passed, removed by another process) terminates COMMAND as a lost lock does. It is the
same semaphore, with the same permits and waiters, as Client.Semaphore(NAME) of the Go package.
COMMAND's environment has REDISSON_SEMAPHORE_NAME and REDISSON_PERMIT_IDS (comma-separated).

Examples:
   redisson semaphore -n 4 encoders -- ffmpeg -i in.mp4 out.webm
   redisson semaphore -n 10 --acquire 3 --wait 1m api-quota -- ./batch.sh`,
		Flags: []cli.Flag{
			&cli.Int64Flag{Config: cli.IntegerConfig{Base: 10}, Name: "permits", Aliases: []string{"n"}, HideDefault: true,
				Usage: "the semaphore's permits `N`, to create it: needed only if it does not exist, ignored (with a warning) if it does"},
			&cli.Int64Flag{Config: cli.IntegerConfig{Base: 10}, Name: "acquire", Value: 1, Usage: "permits to take"},
			&durationFlag{Name: "wait", DefaultText: "wait for ever", Usage: "give up after `D` (exit 75, or -E N); 0: one attempt"},
			conflictExitCodeFlag(),
			&durationFlag{Name: "lease", DefaultText: "none, the watchdog renews", Usage: "fixed lease `D` of the permits instead of the watchdog"},
			&durationFlag{Name: "grace", Value: 10 * time.Second, Usage: "after a loss, time `D` between SIGTERM and SIGKILL"},
		},
		Action: runSemaphore,
	}
}

func runSemaphore(ctx context.Context, cmd *cli.Command) error {
	name, err := nameArg(cmd, 0)
	if err != nil {
		return err
	}
	argv, err := command(cmd)
	if err != nil {
		return err
	}
	n, k := cmd.Int64("permits"), cmd.Int64("acquire")
	if n < 0 || k < 1 {
		return usageError("semaphore: -n must be ≥ 0 and --acquire ≥ 1")
	}
	if _, err := conflictExitCode(cmd); err != nil {
		return err
	}
	stderr := cmd.Root().ErrWriter
	return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
		p := c.PermitExpirableSemaphore(name)
		set := false
		if cmd.IsSet("permits") {
			var err error
			if set, err = p.TrySetPermits(ctx, n); err != nil {
				return classify(ctx, rdb, err)
			}
		}
		total, available, exists, err := semaphorePermits(ctx, c, name)
		switch {
		case err != nil:
			return classify(ctx, rdb, err)
		case !exists:
			return usageError("semaphore: %q does not exist: give -n PERMITS to create it", name)
		case cmd.IsSet("permits") && !set && total != n:
			fmt.Fprintf(stderr, "redisson: semaphore %q has %d permits (%d available): -n %d not applied (it only creates a semaphore)\n",
				name, total, available, n)
		}
		if k > total && !cmd.IsSet("wait") {
			fmt.Fprintf(stderr, "redisson: semaphore %q has %d permits: --acquire %d waits until permits are added\n", name, total, k)
		}
		return runSemaphoreHeld(ctx, cmd, rdb, c, name, argv)
	})
}

// semaphorePermits returns the permits of the semaphore name: available ones and leased ones
// (total), and whether it exists.
func semaphorePermits(ctx context.Context, c *redisson.Client, name string) (total, available int64, exists bool, err error) {
	in, err := c.Inspect(ctx, name)
	if err != nil {
		return 0, 0, false, err
	}
	return in.Value + int64(len(in.Leases)), in.Value, in.Kind != redisson.KindNone, nil
}

// runSemaphoreHeld takes --acquire permits of the semaphore name and runs argv under them (runHeld). Not obtained
// when asking for more than the semaphore's permits, the error says so.
func runSemaphoreHeld(ctx context.Context, cmd *cli.Command, rdb redis.UniversalClient, c *redisson.Client, name string, argv []string) error {
	p, k := c.PermitExpirableSemaphore(name), cmd.Int64("acquire")
	return runHeld(ctx, cmd, rdb, "semaphore "+strconv.Quote(name), argv, func(sctx context.Context) (*held, error) {
		h, err := p.AcquireHeld(sctx, k, acquireOpts(cmd)...)
		if errors.Is(err, redisson.ErrBusy) {
			if total, _, _, ierr := semaphorePermits(ctx, c, name); ierr == nil && k > total {
				err = fmt.Errorf("%w: --acquire %d is more than its %d permits", err, k, total)
			}
		}
		if err != nil {
			return nil, err
		}
		env := []string{"REDISSON_SEMAPHORE_NAME=" + name, "REDISSON_PERMIT_IDS=" + strings.Join(h.IDs(), ",")}
		return &held{what: fmt.Sprintf("permits of %q", name), ctx: h.Context(), env: env, release: func(ctx context.Context) error {
			return p.Release(ctx, h.IDs()...)
		}}, nil
	})
}

func unlockCommand() *cli.Command {
	return &cli.Command{
		Name:      "unlock",
		Usage:     "force-unlock a lock, whoever holds it",
		ArgsUsage: "--force NAME",
		Description: `Deletes the lock NAME whoever holds it (its kind's ForceUnlock: a Lock, FairLock,
FencedLock, SpinLock or ReadWriteLock, or Java Redisson's RLock, RFairLock or RReadWriteLock) and
wakes its waiters. The holder is told at its next renewal (ErrLockLost; a "redisson lock" holder's
command is terminated), or by its unlock if that comes first (a "redisson lock" holder exits 70). --force is required: the CLI never holds a lock to release otherwise.
Exits 0 if it unlocked something, 1 if the name was not locked; a semaphore, latch or any other
value under NAME is left alone (exit 1: a semaphore's permits are released by their holders, or
come back when their leases pass).

Example:
   redisson unlock --force deploy`,
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "required: unlock whoever holds it"}},
		Action: runUnlock,
	}
}

func runUnlock(ctx context.Context, cmd *cli.Command) error {
	name, err := nameArg(cmd, 1)
	if err != nil {
		return err
	}
	if !cmd.Bool("force") {
		return usageError("unlock: --force is required (it unlocks whoever holds the lock)")
	}
	return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
		in, err := c.Inspect(ctx, name)
		if err != nil {
			return classify(ctx, rdb, err)
		}
		// Each layout through a Client in its mode, whatever --redisson-compat says.
		java := false
		switch in.Kind {
		case redisson.KindRedissonLock, redisson.KindRedissonFairLock, redisson.KindRedissonReadWriteLock:
			java = true
		case redisson.KindNone:
			return exitf(exitNotLocked, "%q is not locked", name)
		}
		if !isLock(in.Kind) {
			return exitf(exitNotLocked, "%q is not locked: it holds a value of kind %q, which unlock --force leaves alone", name, in.Kind)
		}
		lc := c
		if java != cmd.Bool("redisson-compat") {
			var err error
			if lc, err = redisson.New(rdb, layoutOpts(cmd, java)...); err != nil {
				return globalUsageError(cmd, "%v", err)
			}
			defer lc.Close()
		}
		var l redisson.Locker
		switch in.Kind {
		case redisson.KindLock, redisson.KindRedissonLock:
			l = lc.Lock(name)
		case redisson.KindFairLock, redisson.KindRedissonFairLock:
			l = lc.FairLock(name)
		case redisson.KindFencedLock:
			l = lc.FencedLock(name)
		case redisson.KindSpinLock:
			l = lc.SpinLock(name)
		default: // KindReadWriteLock, KindRedissonReadWriteLock
			l = lc.ReadWriteLock(name)
		}
		ok, err := l.ForceUnlock(ctx)
		if err != nil {
			return classify(ctx, rdb, err)
		}
		if !ok {
			return exitf(exitNotLocked, "%q is not locked", name)
		}
		fmt.Fprintf(cmd.Root().Writer, "unlocked %q (%s)\n", name, in.Kind)
		return nil
	})
}

// layoutOpts are the options of a Client in Java Redisson's layouts (java) or this package's, with
// the flags' key prefix.
func layoutOpts(cmd *cli.Command, java bool) []redisson.Option {
	var opts []redisson.Option
	if java {
		opts = append(opts, redisson.WithRedissonCompat())
	}
	if p := cmd.String("key-prefix"); p != "" {
		opts = append(opts, redisson.WithKeyPrefix(p))
	}
	return opts
}

func latchCommand() *cli.Command {
	return &cli.Command{
		Name:  "latch",
		Usage: "set, count down or wait for a count-down latch",
		Description: `A CountDownLatch: "set" arms it with a count if it is zero, "count-down" decrements it,
"wait" blocks until it reaches zero (--wait 0: one check).

Examples:
   redisson latch set -n 3 workers-ready
   redisson latch count-down workers-ready     # in each worker
   redisson latch wait --wait 5m workers-ready # exit 75 if not zero within 5m`,
		Commands: []*cli.Command{
			{
				Name: "set", Usage: "set the count to N if it is zero (exit 1 if it was not)", ArgsUsage: "NAME",
				Flags: []cli.Flag{&cli.Int64Flag{Config: cli.IntegerConfig{Base: 10}, Name: "count", Aliases: []string{"n"}, Required: true, Usage: "the count (≥ 1)"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					name, err := nameArg(cmd, 1)
					if err != nil {
						return err
					}
					return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
						ok, err := c.CountDownLatch(name).TrySetCount(ctx, cmd.Int64("count"))
						if err != nil {
							return classify(ctx, rdb, err)
						}
						if !ok {
							return exitf(exitNotLocked, "latch %q: the count is set already", name)
						}
						return nil
					})
				},
			},
			{
				Name: "count-down", Usage: "decrement the count and print it", ArgsUsage: "NAME",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					name, err := nameArg(cmd, 1)
					if err != nil {
						return err
					}
					return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
						n, err := c.CountDownLatch(name).CountDown(ctx)
						if err != nil {
							return classify(ctx, rdb, err)
						}
						fmt.Fprintln(cmd.Root().Writer, n)
						return nil
					})
				},
			},
			{
				Name: "wait", Usage: "wait until the count is zero", ArgsUsage: "NAME",
				Flags: []cli.Flag{&durationFlag{Name: "wait", DefaultText: "wait for ever", Usage: "give up after `D` (exit 75); 0: one check"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					name, err := nameArg(cmd, 1)
					if err != nil {
						return err
					}
					return withClient(ctx, cmd, false, func(rdb redis.UniversalClient, c *redisson.Client) error {
						sctx, sigs, stop := catchSignals(ctx)
						defer stop()
						latch := c.CountDownLatch(name)
						var err error
						switch {
						case cmd.IsSet("wait") && cmd.Duration("wait") == 0:
							// One check, as lock --wait 0 is one attempt.
							var n int64
							if n, err = latch.Count(sctx); err == nil && n > 0 {
								return exitf(exitNotObtained, "latch %q: not zero (count %d)", name, n)
							}
						case cmd.IsSet("wait"):
							wctx, cancel := context.WithTimeout(sctx, cmd.Duration("wait"))
							defer cancel()
							if err = latch.Wait(wctx); errors.Is(err, context.DeadlineExceeded) && wctx.Err() != nil && sctx.Err() == nil {
								return exitf(exitNotObtained, "latch %q: not zero within %v", name, cmd.Duration("wait"))
							}
						default:
							err = latch.Wait(sctx)
						}
						switch {
						case err == nil:
							return nil
						case sigs.interrupted("latch wait") != nil:
							return sigs.interrupted("latch wait")
						}
						return classify(ctx, rdb, err)
					})
				},
			},
		},
	}
}
