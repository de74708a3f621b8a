// Command redisson runs shell commands under the distributed locks and semaphores of the Go package
// github.com/goredisson/redisson, and inspects, watches and force-unlocks what a name holds.
//
//	go install github.com/goredisson/redisson/cmd/redisson@latest
//
// It is a separate program: the library package does not import this command's dependencies
// (urfave/cli), so programs that use the library do not link them.
//
// # Usage
//
//	redisson [connection flags] COMMAND [flags] NAME [-- CMD ARGS...]
//
//	lock NAME [--fair|--fenced|--spin] [--wait D] [-E N] [--lease D] [--grace D] [-- CMD ARGS...]
//	    obtain the lock (no --wait: wait for ever; --wait 0: one attempt), run CMD, unlock when it
//	    exits; the watchdog renews the lock meanwhile (--lease: a fixed lease instead); -E N
//	    (--conflict-exit-code): exit N instead of 75 if not obtained, as flock -E; without CMD
//	    (as etcdctl lock NAME): print `lock "NAME" held by owner ID` (with --fenced, the fencing
//	    token) and hold the lock until SIGINT, SIGTERM or SIGHUP, then unlock and exit 0 (70 if
//	    it was lost meanwhile)
//	semaphore NAME [-n PERMITS] [--acquire K] [--wait D] [-E N] [--lease D] [--grace D] -- CMD ARGS...
//	    set the semaphore to PERMITS if never set, take K permits (default 1), run CMD, release;
//	    -n is needed only if the semaphore does not exist (else exit 64), and is not applied to
//	    one that exists with another number of permits (a line on stderr says so); K more than the
//	    semaphore's permits waits until permits are added (a line on stderr says so; with --wait,
//	    not obtained says K is more than its permits: exit 75, or -E N)
//	inspect NAME [--json]
//	    what NAME holds: kind, holders and hold counts, remaining TTL, waiters, fencing token,
//	    permits and leases, latch count (redisson.Client.Inspect); who each holder is: a Go
//	    holder's host, pid and program and how long ago it took the lock, a Java holder's
//	    client UUID and thread id
//	unlock --force NAME
//	    force-unlock whatever lock NAME holds; exit 0 if it unlocked something, 1 if not locked
//	    (a semaphore, latch or other value under NAME is left alone: exit 1)
//	latch set NAME -n N | latch count-down NAME | latch wait NAME [--wait D]
//	    wait: until the count is zero (--wait 0: one check)
//	watch NAME [--interval D]
//	    a timestamped line each time what NAME holds changes, until Ctrl-C
//	completion bash|zsh|fish
//	    a shell completion script (source <(redisson completion bash)); bash's works with or
//	    without the bash-completion package
//	help [COMMAND [SUBCOMMAND]]
//	    the help of redisson or of a command, as COMMAND [SUBCOMMAND] --help prints it
//
// A duration D is a number of seconds (5, 0.5, as flock -w takes) or a Go duration (5s, 250ms,
// 1m30s); a negative one is a usage error.
//
// Put "--" before CMD when it has options of its own. A command line whose last argument is
// --generate-shell-completion is a completion request, even after "--" (the completion scripts
// ask for the words of CMD so): nothing is locked and nothing runs, so a CMD whose last argument
// is that cannot be run by redisson. CMD runs with stdin, stdout and stderr passed
// through, in a process group of its own, which is never the terminal's foreground group: CMD
// cannot read from the terminal (it stops with SIGTTIN: redirect its input if it needs one), and
// job control does not reach it (Ctrl-Z stops redisson, whose watchdog then renews nothing, but not
// CMD: do not suspend a redisson lock). What CMD starts in the background stays in
// its group and runs under the lock too: redisson unlocks and exits once CMD has exited and no process
// is left in its group (a process meant to outlive the lock must leave the group: setsid). SIGINT,
// SIGTERM and SIGHUP received by redisson are passed on to CMD's group; once CMD has exited after
// such a signal, what is left of its group gets SIGTERM, then SIGKILL after --grace (a
// non-interactive shell starts its background jobs with SIGINT ignored). If the lock is lost while
// the group runs (deleted by a force-unlock, expired, Redis unreachable until the lease may lapse, a
// --lease that ends), the group gets SIGTERM, then SIGKILL after --grace (default 10s), and
// redisson exits 70 once it is empty. A loss no renewal reported before the group exited (a
// force-unlock: the watchdog renews every third of its timeout) is found by the release: redisson
// exits 70 too, whatever CMD's status (a release whose outcome is unknown, Redis being unreachable,
// is reported on stderr and leaves CMD's status). If redisson itself is killed (SIGKILL), the
// watchdog stops and the lock is free within the watchdog timeout (--watchdog, default 30s); on Linux
// CMD's whole group is SIGKILLed at once, so that nothing runs on without the lock: redisson runs CMD
// through a guard process, its child, which gets a parent-death signal (prctl PR_SET_PDEATHSIG) and
// then SIGKILLs the group (the guard is redisson itself in a hidden mode, outside CMD's group, and
// reaps what CMD leaves behind). Elsewhere there is no parent-death signal: CMD and its group can
// outlive a killed redisson, and run on without the lock.
//
// The semaphore command takes leased permits (a PermitExpirableSemaphore, the same semaphore as
// Client.Semaphore(NAME)): watchdog-renewed, or with --lease a fixed lease, so that the permits of a
// killed redisson come back within the watchdog timeout (a plain Semaphore's permits have no owner
// and would be lost for good) and a lost permit terminates CMD as a lost lock does.
//
// # Connection
//
//	--url URL             redis://[user:password@]host:port[/db] or rediss:// (TLS); $REDIS_URL
//	--addr HOST:PORT      repeatable or comma-separated (default localhost:6379)
//	--cluster             the addresses (or the URL) are seeds of a Redis Cluster; several
//	                      addresses imply it
//	--sentinel-master N   the addresses are Sentinels of master N
//	--password P          $REDIS_PASSWORD
//	--db N                database number
//	--key-prefix P        redisson.WithKeyPrefix
//	--redisson-compat     Java Redisson's layouts (redisson.WithRedissonCompat)
//	--watchdog D          redisson.WithWatchdogTimeout
//	--no-process-record   redisson.WithoutProcessRecord: lock and semaphore write no record of
//	                      this host, pid and program for inspect to show
//
// The go-redis client is made with ContextTimeoutEnabled, so that every wait is bounded by its
// deadline.
//
// # Environment
//
// CMD's environment gains REDISSON_LOCK_NAME (lock) and, with --fenced, REDISSON_FENCING_TOKEN, the
// acquisition's fencing token, strictly increasing, for the resource to check; or
// REDISSON_SEMAPHORE_NAME and REDISSON_PERMIT_IDS (comma-separated) for semaphore. redisson reads
// REDIS_URL and REDIS_PASSWORD.
//
// # Exit status
//
// In sysexits(3) style:
//
//	CMD's status   when CMD ran (128+N if signal N ended it, as shells report it)
//	1              unlock --force: nothing was locked; latch set: the count was set already
//	64             usage error (flags, arguments, a bad name)
//	69             Redis unreachable, or a Redis error before CMD ran
//	70             the lock or permits were not held throughout CMD: lost while it ran (CMD was
//	               terminated), or found lost by the release once it had exited
//	74             EX_IOERR: what was to be printed on stdout could not be written (a closed
//	               pipe: watch NAME | head -1); lock without CMD then releases the lock at once
//	75             EX_TEMPFAIL: not obtained within --wait, or at once with --wait 0; latch wait:
//	               not zero within --wait (flock(1) exits 1 there: -E N, --conflict-exit-code N,
//	               0 to 255, of lock and semaphore chooses the code, as flock -E does)
//	126, 127       CMD could not be run, or was not found
//	128+N          interrupted by signal N before CMD ran
package main
