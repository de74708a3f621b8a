package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/goredisson/redisson"
)

// runInProcess runs the command line args (without the program name) in this process and returns
// its exit code, stdout and stderr.
func runInProcess(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), append([]string{"redisson"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// commandPaths returns the paths of cmd's visible subcommands, recursively ("lock", "latch set").
func commandPaths(cmd *cli.Command, prefix []string) [][]string {
	var paths [][]string
	for _, sub := range cmd.Commands {
		if sub.Hidden {
			continue
		}
		p := append(append([]string(nil), prefix...), sub.Name)
		paths = append(paths, p)
		paths = append(paths, commandPaths(sub, p)...)
	}
	return paths
}

// Every flag's default appears once in the help, and none is the zero value standing for "not
// set" (a --wait or --lease of 0s is not what an absent flag means). The root help has the
// connection flags and the exit codes; a subcommand's has its own flags and a line pointing at
// the root help instead.
func TestHelpShowsEachDefaultOnceAndGlobalsInTheRootHelpOnly(t *testing.T) {
	t.Parallel()
	app := newApp(io.Discard, io.Discard)
	for _, path := range append([][]string{nil}, commandPaths(app, nil)...) {
		code, stdout, stderr := runInProcess(t, append(path, "--help")...)
		name := strings.Join(append([]string{"redisson"}, path...), " ")
		if code != 0 || stderr != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", name, code, stderr)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.Count(line, "default") > 1 {
				t.Errorf("%s --help: a default given twice: %q", name, line)
			}
			if strings.Contains(line, "(default: 0s)") {
				t.Errorf("%s --help: a zero default that is not the flag's meaning when absent: %q", name, line)
			}
		}
		root := path == nil
		for _, s := range []string{"EXIT STATUS", "GLOBAL OPTIONS", "--url", "--watchdog"} {
			if strings.Contains(stdout, s) != root {
				t.Errorf("%s --help: has %q: %v, want %v\n%s", name, s, !root, root, stdout)
			}
		}
		if !root && !strings.Contains(stdout, globalHelpLine) {
			t.Errorf("%s --help: no line pointing at the root help\n%s", name, stdout)
		}
	}

	_, root, _ := runInProcess(t, "--help")
	_, lock, _ := runInProcess(t, "lock", "--help")
	for _, want := range []struct{ help, flag, def string }{
		{root, "--watchdog", "(default: " + redisson.DefaultWatchdogTimeout.String() + ")"},
		{root, "--addr", "(default: localhost:6379)"},
		{lock, "--wait", "(default: wait for ever)"},
		{lock, "--lease", "(default: none, the watchdog renews)"},
		{lock, "--grace", "(default: 10s)"},
	} {
		if line := helpLine(want.help, want.flag); !strings.Contains(line, want.def) {
			t.Errorf("help of %s: %q, want %s", want.flag, line, want.def)
		}
	}
}

// helpLine returns the line of help that describes flag ("" if none).
func helpLine(help, flag string) string {
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), flag+" ") {
			return line
		}
	}
	return ""
}

// A usage error prints one line of error and one pointing at the help of the command that failed,
// nothing on stdout, and exits 64.
func TestUsageErrorIsOneLineAndAPointerToHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args      []string
		err, help string
	}{
		{[]string{"lock", "--wait", "x", "name", "--", "true"}, `redisson: invalid value "x" for flag --wait: `, "redisson lock"},
		{[]string{"lock", "--no-such-flag", "name", "--", "true"}, "redisson: flag provided but not defined: --no-such-flag", "redisson lock"},
		{[]string{"lock", "--fair", "--spin", "name", "--", "true"}, "redisson: lock: --fair, --fenced and --spin exclude each other", "redisson lock"},
		{[]string{"lock"}, "redisson: lock: missing NAME", "redisson lock"},
		{[]string{"--db", "x", "inspect", "name"}, `redisson: invalid value "x" for flag --db: `, "redisson"},
		{[]string{"latch", "set", "name"}, `redisson: Required flag "count" not set`, "redisson latch set"},
		{[]string{"latch", "set", "-n", "1"}, "redisson: latch set: missing NAME", "redisson latch set"},
		{[]string{"no-such-command"}, `redisson: unknown command "no-such-command"`, "redisson"},
		{[]string{"help", "no-such-command"}, `redisson: help: unknown command "no-such-command"`, "redisson"},
		{[]string{"latch", "no-such-command"}, `redisson: latch: unknown command "no-such-command"`, "redisson latch"},
		{[]string{"completion", "no-such-shell"}, `redisson: completion: unknown command "no-such-shell"`, "redisson completion"},
		{[]string{"lock", "name", "--"}, "redisson: lock: missing COMMAND after --", "redisson lock"},
		{[]string{"lock", "name", "--wait", "1", "--"}, "redisson: lock: missing COMMAND after --", "redisson lock"},
		{[]string{"lock", "--wait", "9999999999", "name", "--", "true"}, `redisson: invalid value "9999999999" for flag --wait: too large`, "redisson lock"},
		// The connection flags are in the root help, whatever command runs.
		{[]string{"--url", "garbage", "lock", "name", "--", "true"}, "redisson: --url (or REDIS_URL): ", "redisson"},
		{[]string{"--watchdog", "0.01", "lock", "name", "--", "true"}, "redisson: invalid argument: watchdog timeout 10ms", "redisson"},
		{[]string{"--addr", "localhost:1", "--url", "redis://localhost:1", "inspect", "name"}, "redisson: give --url (or REDIS_URL) or --addr", "redisson"},
		{[]string{"--cluster", "--db", "1", "inspect", "name"}, "redisson: --db: a Redis Cluster has database 0 only", "redisson"},
	} {
		code, stdout, stderr := runInProcess(t, tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != exitUsage || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], tc.err) ||
			lines[1] != "Run '"+tc.help+" --help' for usage." {
			t.Errorf("%q: exit %d (want %d), stdout %q, stderr %q; want %q... then a pointer at %s --help",
				tc.args, code, exitUsage, stdout, stderr, tc.err, tc.help)
		}
	}
}

// A command that only groups others (latch, completion), run alone, prints its help on stdout and
// exits 64, as the root command does.
func TestGroupCommandAloneIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"latch", "completion"} {
		code, stdout, stderr := runInProcess(t, name)
		if code != exitUsage || !strings.Contains(stdout, "redisson "+name+" - ") ||
			stderr != "Run 'redisson "+name+" --help' for usage.\n" {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q; want its help and a pointer at it", name, code, exitUsage, stdout, stderr)
		}
	}
}

// The bash completion script completes without the bash-completion package (a bash started with
// --norc --noprofile has none of its functions): no "command not found", and the commands and
// flags come back; the shell's own variables are left alone.
func TestBashCompletionWorksWithoutBashCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	// The user's own variables are left alone: prev is set before and printed after.
	script := `prev=mine; source <(redisson completion bash) || exit 1
declare -F _get_comp_words_by_ref _comp_initialize && { echo "bash-completion is loaded"; exit 1; }
COMP_WORDS=(redisson lo); COMP_CWORD=1; __redisson_bash_autocomplete; echo "1: ${COMPREPLY[*]}"
COMP_WORDS=(redisson lock --wai); COMP_CWORD=2; __redisson_bash_autocomplete; echo "2: ${COMPREPLY[*]}"
echo "prev: $prev"`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("bash: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	if want := "1: lock\n2: --wait\nprev: mine\n"; stdout.String() != want {
		t.Fatalf("completions %q, want %q", stdout.String(), want)
	}
}

// "help" and "h" are names like any other: inspect, unlock --force and lock take them as NAME (with
// or without "--" before them), not as the help command urfave/cli adds to every command.
func TestHelpIsANameLikeAnyOther(t *testing.T) {
	t.Parallel()
	srv, _, c := server(t)
	for _, name := range []string{"help", "h"} {
		for _, args := range [][]string{{"inspect", name}, {"inspect", "--", name}, {"watch", "--interval", "0.05", name}} {
			if args[0] == "watch" {
				w := start(t, srv, nil, args...)
				waitFor(t, 10*time.Second, "watch's first line or its exit", func() bool {
					select {
					case <-w.done:
						return true
					default:
						return strings.Contains(w.stdout.String(), "none")
					}
				})
				if got := w.stdout.String(); !strings.Contains(got, " none") || strings.Contains(got, "NAME:") {
					t.Errorf("%q: stdout %.80q; want a line saying %q holds nothing", args, got, name)
				}
				continue
			}
			if code, stdout, stderr := runCLI(t, srv, args...); code != 0 || !strings.HasPrefix(stdout, "name:     "+name+"\n") {
				t.Errorf("%q: exit %d, stdout %.80q, stderr %q; want what %q holds", args, code, stdout, stderr, name)
			}
		}
		h, err := c.Lock(name).Lock(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, srv, "unlock", "--force", name)
		_ = h.Unlock(t.Context())
		if code != 0 || stdout != fmt.Sprintf("unlocked %q (lock)\n", name) {
			t.Errorf("unlock --force %s: exit %d, stdout %.80q, stderr %q; want it unlocked", name, code, stdout, stderr)
		}
		if code, stdout, stderr := runCLI(t, srv, "lock", name, "--", "echo", "ran"); code != 0 || stdout != "ran\n" {
			t.Errorf("lock %s -- echo ran: exit %d, stdout %q, stderr %q; want the command run under the lock", name, code, stdout, stderr)
		}
	}
}

// --help after NAME shows the command's help and exits 0, as it does before NAME: NAME is not a
// help topic ("help: unknown command").
func TestHelpFlagAfterNameShowsTheCommandsHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"lock", "name", "--help"},
		{"lock", "--help", "name"},
		{"inspect", "name", "--help"},
		{"latch", "set", "name", "--help"},
	} {
		code, stdout, stderr := runInProcess(t, args...)
		want := "redisson " + strings.Join(args[:len(args)-2], " ") + " - "
		if args[1] == "--help" {
			want = "redisson " + args[0] + " - "
		}
		if code != 0 || !strings.Contains(stdout, want) || stderr != "" {
			t.Errorf("%q: exit %d, stdout %.80q, stderr %q; want the help (%q) and exit 0", args, code, stdout, stderr, want)
		}
	}
}

// help takes the whole path of a subcommand: help latch set is latch set's help, help latch NOSUCH
// a usage error as help NOSUCH is.
func TestHelpTopicIsTheWholeCommandPath(t *testing.T) {
	t.Parallel()
	for _, path := range [][]string{{"latch", "set"}, {"latch", "wait"}, {"completion", "bash"}} {
		code, stdout, stderr := runInProcess(t, append([]string{"help"}, path...)...)
		if want := "redisson " + strings.Join(path, " ") + " - "; code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("help %s: exit %d, stdout %.80q, stderr %q; want %q", strings.Join(path, " "), code, stdout, stderr, want)
		}
	}
	code, stdout, stderr := runInProcess(t, "help", "latch", "no-such-command")
	if code != exitUsage || stdout != "" ||
		stderr != "redisson: help: unknown command \"latch no-such-command\"\nRun 'redisson latch --help' for usage.\n" &&
			stderr != "redisson: help: unknown command \"no-such-command\"\nRun 'redisson latch --help' for usage.\n" {
		t.Errorf("help latch no-such-command: exit %d, stdout %.80q, stderr %q; want a usage error pointing at redisson latch --help",
			code, stdout, stderr)
	}
}

// The help command's own flags: --help shows its help (exit 0), as help help does; an unknown flag
// is one line of error (its long name with two dashes) and a pointer at the help, not urfave/cli's
// "Incorrect Usage" followed by the same error again.
func TestHelpCommandFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help", "--help"}, {"help", "-h"}} {
		if code, stdout, stderr := runInProcess(t, args...); code != 0 || !strings.Contains(stdout, "redisson help - ") || stderr != "" {
			t.Errorf("%q: exit %d, stdout %.80q, stderr %q; want help's help and exit 0", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"help", "--no-such-flag"}, {"help", "lock", "--no-such-flag"}, {"latch", "help", "--no-such-flag"}} {
		code, stdout, stderr := runInProcess(t, args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != exitUsage || stdout != "" || len(lines) != 2 || lines[0] != "redisson: flag provided but not defined: --no-such-flag" ||
			!strings.HasPrefix(lines[1], "Run 'redisson") {
			t.Errorf("%q: exit %d, stdout %.80q, stderr %q; want one line of error and a pointer at the help", args, code, stdout, stderr)
		}
	}
}
