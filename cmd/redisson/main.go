package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v3"

	"github.com/goredisson/redisson"
)

// Exit codes (see the package documentation), in sysexits(3) style.
const (
	exitNotLocked   = 1  // unlock --force found nothing held; latch set found the count set already
	exitUsage       = 64 // EX_USAGE: bad flags, arguments or names
	exitUnavailable = 69 // EX_UNAVAILABLE: Redis unreachable, or a Redis error before the command ran
	exitLost        = 70 // EX_SOFTWARE: the lock or permits were lost while the command ran
	exitIOErr       = 74 // EX_IOERR: what was to be printed on stdout could not be (a closed pipe)
	exitNotObtained = 75 // EX_TEMPFAIL: not obtained within --wait (flock exits 1; lock and semaphore take its -E N)
	exitNotFound    = 127
	exitNotExec     = 126
)

// exitError ends the program with code, after printing err (if any) to stderr.
type exitError struct {
	code int
	err  error
	// help is the full name of the command whose help a usage error points at ("redisson lock"), or
	// "" (set by usageHints).
	help string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// usageError is a usage error (exit 64) explained by err.
func usageError(format string, args ...any) error { return exitf(exitUsage, format, args...) }

// globalUsageError is a usage error of the connection flags (or REDIS_URL): it points at the root
// help, which has them, whatever command is run.
func globalUsageError(cmd *cli.Command, format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...), help: cmd.Root().Name}
}

func main() {
	redis.SetLogger(quiet{})
	// A write to a closed stdout or stderr (redisson lock ... 2>&1 | head) must fail with EPIPE, not
	// kill redisson by SIGPIPE: that would leave the command running unsupervised (not terminated on
	// a loss) and exit 141 instead of the documented codes. Notify, not Ignore: an ignored signal
	// would stay ignored in the command, a caught one is reset to the default by exec.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if len(os.Args) > 1 && os.Args[1] == guardArg {
		os.Exit(guard(os.Args[2:]))
	}
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit code; output goes to stdout and stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	app := newApp(out, stderr)
	app.Metadata = map[string]any{rawArgsKey: args}
	err := app.Run(ctx, args)
	var ee *exitError
	if out.err != nil && (err == nil || !errors.As(err, &ee)) {
		// What was to be printed was not (stdout a closed pipe): not a success, nor a usage error.
		err = exitf(exitIOErr, "cannot write on stdout: %v", out.err)
	}
	if err == nil {
		return 0
	}
	if !errors.As(err, &ee) {
		// What urfave/cli reports itself past the usage errors that usageHints sees is a usage
		// error too.
		ee = &exitError{code: exitUsage, err: err, help: app.Name}
	}
	if ee.err != nil {
		report(stderr, ee.err)
	}
	if ee.code == exitUsage && ee.help != "" {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ee.help)
	}
	return ee.code
}

// outWriter is stdout, remembering its first write error: a command that printed nothing of what
// it was to print exits 74 (see run).
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// report prints err on stderr, prefixed once with "redisson: " (the library's errors have it).
func report(stderr io.Writer, err error) {
	fmt.Fprintln(stderr, "redisson: "+strings.TrimPrefix(err.Error(), "redisson: "))
}

// quiet discards go-redis's own log lines (dial retries): the errors reach the user through the
// calls that failed.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Connection flags, shared by every command (urfave/cli flags are inherited by subcommands).
func connectionFlags() []cli.Flag {
	const cat = "Connection"
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Category: cat, Sources: cli.EnvVars("REDIS_URL"),
			Usage: "Redis URL: redis://[user:password@]host:port[/db] or rediss:// (TLS); with --cluster, a cluster URL (?addr=host2:port2 for more seeds)"},
		&cli.StringSliceFlag{Name: "addr", Category: cat, DefaultText: "localhost:6379",
			Usage: "Redis address host:port, repeatable or comma-separated; several imply --cluster unless --sentinel-master"},
		&cli.BoolFlag{Name: "cluster", Category: cat, Usage: "the addresses are seeds of a Redis Cluster"},
		&cli.StringFlag{Name: "sentinel-master", Category: cat, Usage: "the addresses are Sentinels of the master called `NAME`"},
		&cli.StringFlag{Name: "password", Category: cat, Sources: cli.EnvVars("REDIS_PASSWORD"), Usage: "Redis password (also for the Sentinels)"},
		&cli.IntFlag{Config: cli.IntegerConfig{Base: 10}, Name: "db", Category: cat, Usage: "database number (not on a Cluster)"},
		&cli.StringFlag{Name: "key-prefix", Category: cat, Usage: "prefix of every key (redisson.WithKeyPrefix)"},
		&cli.BoolFlag{Name: "redisson-compat", Category: cat, Usage: "Java Redisson's layouts, shared with Java services (redisson.WithRedissonCompat)"},
		&durationFlag{Name: "watchdog", Category: cat, DefaultText: redisson.DefaultWatchdogTimeout.String(),
			Usage: "watchdog timeout `D`: the lease renewed every third of it; a killed holder's lock is free within it"},
		&cli.BoolFlag{Name: "no-process-record", Category: cat, Usage: "write no record of this host, pid and program for inspect to show (redisson.WithoutProcessRecord)"},
	}
}

// connect opens the go-redis client and the redisson Client the flags describe. compat forces Java
// Redisson's layouts whatever --redisson-compat says (unlock --force of a Redisson lock).
func connect(cmd *cli.Command, compat bool) (redis.UniversalClient, *redisson.Client, error) {
	rdb, err := redisClient(cmd)
	if err != nil {
		return nil, nil, err
	}
	opts := layoutOpts(cmd, compat || cmd.Bool("redisson-compat"))
	// The CLI reports a loss itself (exit 70 and a line on stderr): only the library's errors go to
	// stderr, not its warnings.
	opts = append(opts, redisson.WithLogger(slog.New(slog.NewTextHandler(cmd.Root().ErrWriter, &slog.HandlerOptions{Level: slog.LevelError}))))
	if cmd.IsSet("watchdog") {
		opts = append(opts, redisson.WithWatchdogTimeout(cmd.Duration("watchdog")))
	}
	// A loss terminates the command at once, not at the next renewal.
	opts = append(opts, redisson.WithLossTracking(true))
	if cmd.Bool("no-process-record") {
		opts = append(opts, redisson.WithoutProcessRecord())
	}
	c, err := redisson.New(rdb, opts...)
	if err != nil {
		_ = rdb.Close()
		return nil, nil, globalUsageError(cmd, "%v", err)
	}
	return rdb, c, nil
}

// redisClient builds the go-redis client, with ContextTimeoutEnabled (see the package
// documentation of redisson: without it, context deadlines do not bound network waits).
func redisClient(cmd *cli.Command) (redis.UniversalClient, error) {
	var addrs []string
	for _, a := range cmd.StringSlice("addr") {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				addrs = append(addrs, s)
			}
		}
	}
	url, master := cmd.String("url"), cmd.String("sentinel-master")
	cluster := cmd.Bool("cluster") || (len(addrs) > 1 && master == "")
	password, db := cmd.String("password"), cmd.Int("db")
	switch {
	case cmd.IsSet("addr") && len(addrs) == 0:
		// --addr "$HOST" with HOST unset must not lock on localhost's Redis instead.
		return nil, globalUsageError(cmd, "--addr: no address given")
	case db < 0:
		return nil, globalUsageError(cmd, "--db %d: must not be negative", db)
	case cluster && db != 0:
		return nil, globalUsageError(cmd, "--db: a Redis Cluster has database 0 only")
	case url != "" && cluster && clusterURLHasDB(url):
		return nil, globalUsageError(cmd, "--url (or REDIS_URL): a Redis Cluster has database 0 only, the URL names another")
	case url != "" && (len(addrs) > 0 || master != ""):
		return nil, globalUsageError(cmd, "give --url (or REDIS_URL) or --addr (with --sentinel-master), not both")
	case url != "" && cluster:
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, globalUsageError(cmd, "--url (or REDIS_URL): %v", err)
		}
		if cmd.IsSet("password") {
			o.Password = password
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(o), nil
	case url != "":
		o, err := redis.ParseURL(url)
		if err != nil {
			return nil, globalUsageError(cmd, "--url (or REDIS_URL): %v", err)
		}
		if cmd.IsSet("password") {
			o.Password = password
		}
		if cmd.IsSet("db") {
			o.DB = db
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClient(o), nil
	}
	if len(addrs) == 0 {
		addrs = []string{"localhost:6379"}
	}
	switch {
	case master != "":
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: addrs,
			Password: password, SentinelPassword: password, DB: db, ContextTimeoutEnabled: true}), nil
	case cluster:
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Password: password, ContextTimeoutEnabled: true}), nil
	}
	return redis.NewClient(&redis.Options{Addr: addrs[0], Password: password, DB: db, ContextTimeoutEnabled: true}), nil
}

// clusterURLHasDB reports whether the URL's path names a database other than 0 (redis://h:p/1):
// go-redis's ParseClusterURL ignores it.
func clusterURLHasDB(raw string) bool {
	u, err := neturl.Parse(raw)
	if err != nil {
		return false // ParseClusterURL reports it
	}
	p := strings.Trim(u.Path, "/")
	return p != "" && p != "0"
}

// closeAll closes the redisson Client, then the go-redis client.
func closeAll(rdb redis.UniversalClient, c *redisson.Client) {
	if c != nil {
		_ = c.Close()
	}
	if rdb != nil {
		_ = rdb.Close()
	}
}

// classify turns the error of a call made before the command ran into an exit error: 64 for bad
// input, 69 when Redis is unreachable or answered an error, 75 when the lock or permits were not
// obtained (held by others until --wait passed: redisson.ErrBusy).
func classify(ctx context.Context, rdb redis.UniversalClient, err error) error {
	var rerr redis.Error
	switch {
	case errors.Is(err, redisson.ErrInvalidArgument), errors.Is(err, errors.ErrUnsupported):
		return exitf(exitUsage, "%v", err)
	case errors.Is(err, redisson.ErrWrongType), errors.As(err, &rerr):
		return exitf(exitUnavailable, "%v", err)
	case errors.Is(err, redisson.ErrBusy):
		return exitf(exitNotObtained, "%v", err)
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if perr := rdb.Ping(pctx).Err(); perr != nil {
		return exitf(exitUnavailable, "%v (Redis: %v)", err, perr)
	}
	return exitf(exitUnavailable, "%v", err)
}

// ping checks that Redis answers before anything is tried (exit 69 if not).
func ping(ctx context.Context, rdb redis.UniversalClient) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		return exitf(exitUnavailable, "Redis unreachable: %v", err)
	}
	return nil
}

// withClient runs f with a connected client, closing it afterwards.
func withClient(ctx context.Context, cmd *cli.Command, compat bool, f func(rdb redis.UniversalClient, c *redisson.Client) error) error {
	rdb, c, err := connect(cmd, compat)
	if err != nil {
		return err
	}
	defer closeAll(rdb, c)
	if err := ping(ctx, rdb); err != nil {
		return err
	}
	return f(rdb, c)
}

// nameArg returns the command's single NAME argument, or a usage error.
func nameArg(cmd *cli.Command, max int) (string, error) {
	if cmd.NArg() < 1 || cmd.Args().First() == "" {
		return "", usageError("%s: missing NAME", commandName(cmd))
	}
	if max > 0 && cmd.NArg() > max {
		return "", usageError("%s: unexpected arguments %q", commandName(cmd), cmd.Args().Slice()[max:])
	}
	return cmd.Args().First(), nil
}

// commandName is the command's name as its messages give it: "lock", "latch set".
func commandName(cmd *cli.Command) string {
	return strings.TrimPrefix(cmd.FullName(), cmd.Root().Name+" ")
}
