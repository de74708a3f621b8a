// Package leakcheck finds goroutines that outlive a package's tests.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { leakcheck.Main(m) }
//
// After all tests have passed, Main waits (bounded) for goroutines started by
// the tests to finish and fails the test binary, printing their stacks, if
// any remain. Goroutines of the runtime and the testing framework are
// ignored.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// DefaultTimeout is how long Main waits for goroutines to finish.
const DefaultTimeout = 5 * time.Second

// ignored lists function names (prefixes of a stack frame line) whose
// presence in a goroutine's stack marks it as belonging to the runtime or
// the testing framework rather than to the code under test.
var ignored = []string{
	"testing.tRunner(",           // a test that is still being torn down
	"testing.(*M).",              // the test main and its helpers
	"testing.runTests",           // main test loop
	"testing.(*F).",              // fuzzing
	"testing.runFuzzing",         // fuzzing
	"os/signal.signal_recv",      // signal.Notify's receive loop
	"os/signal.loop",             // ditto
	"runtime.ensureSigM",         // signal mask manager
	"runtime/trace.",             // -trace
	"runtime.ReadTrace",          // -trace
	"runtime/pprof.",             // -cpuprofile and friends
	"internal/coverage/",         // coverage support
	"testing/internal/testdeps.", // test binary plumbing
}

// Main runs the tests with m.Run. If they pass, it then waits up to
// DefaultTimeout for leftover goroutines to finish; if some remain it prints
// their stacks to stderr and exits with status 1. It never returns: it
// calls os.Exit with the tests' status (or 1 for a leak). Leaks are not
// checked when the tests failed, to keep their output readable.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := Check(DefaultTimeout); err != nil {
			fmt.Fprintf(os.Stderr, "leakcheck: %v\n", err)
			// go test prints "ok" from the exit status alone; say why it
			// failed on a line of its own.
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked")
			code = 1
		}
	}
	os.Exit(code)
}

// Check blocks until no goroutine other than the caller's and ignored ones
// (runtime, testing framework) is left, polling with a growing interval, or
// until timeout elapses. It returns nil in the first case and an error
// holding the remaining goroutines' stacks in the second. It only makes
// sense when no other test is running, e.g. after m.Run or in a test that
// is not parallel with others.
func Check(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		leaked := Leaked()
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d goroutine(s) still running after %v:\n\n%s",
				len(leaked), timeout, strings.Join(leaked, "\n\n"))
		}
		time.Sleep(wait) // polling interval, not synchronisation
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// Leaked returns the stacks of all goroutines except the caller's and the
// ignored ones, in runtime.Stack format; it does not block.
func Leaked() []string {
	var leaked []string
	for i, g := range goroutines() {
		if i == 0 {
			continue // runtime.Stack lists the calling goroutine first
		}
		if !isIgnored(g) {
			leaked = append(leaked, g)
		}
	}
	return leaked
}

// goroutines returns one runtime.Stack record per goroutine.
func goroutines() []string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Split(strings.TrimSpace(string(buf)), "\n\n")
}

// isIgnored reports whether a goroutine record belongs to the runtime or
// the testing framework. Only the goroutine's own frames are inspected, not
// its "created by" line, so goroutines started by tests are never ignored.
func isIgnored(g string) bool {
	lines := strings.Split(g, "\n")
	ownFrames := 0
	for _, l := range lines[1:] { // lines[0] is "goroutine N [state]:"
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "created by ") {
			continue // file:line, or the creator
		}
		for _, prefix := range ignored {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
		if !strings.HasPrefix(l, "runtime.") {
			ownFrames++
		}
	}
	// Nothing but runtime frames (e.g. a bare runtime.goexit).
	return ownFrames == 0
}
