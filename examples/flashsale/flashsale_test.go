package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/redistest"
	"go.uber.org/goleak"
)

// TestMain lets the test binary play the worker processes that run re-executes (os.Executable is
// the test binary here), and the whole program for TestMainProgram.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv(workerEnv) == "1":
		os.Exit(workerMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	case os.Getenv(mainEnv) == "1":
		os.Exit(parentMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// mainEnv makes the re-executed test binary run the program's main instead of the tests.
const mainEnv = "FLASHSALE_TEST_MAIN"

var resultRE = regexp.MustCompile(`^RESULT sold=(\d+) oversold=(\d+) buyers=(\d+) processes=(\d+) wait_p50=(\S+) wait_p99=(\S+)$`)

// parsedResult is a RESULT line taken apart.
type parsedResult struct {
	sold, oversold, buyers, processes int
	p50, p99                          time.Duration
}

// lastLine checks that the output ends with exactly one RESULT line and parses it.
func lastLine(t *testing.T, out string) parsedResult {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	m := resultRE.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q does not match %v; output:\n%s", last, resultRE, out)
	}
	if n := strings.Count(out, "RESULT "); n != 1 {
		t.Fatalf("%d RESULT lines; output:\n%s", n, out)
	}
	var p parsedResult
	for i, dst := range []*int{&p.sold, &p.oversold, &p.buyers, &p.processes} {
		*dst, _ = strconv.Atoi(m[i+1])
	}
	var err error
	if p.p50, err = time.ParseDuration(m[5]); err != nil {
		t.Fatalf("wait_p50: %v", err)
	}
	if p.p99, err = time.ParseDuration(m[6]); err != nil {
		t.Fatalf("wait_p99: %v", err)
	}
	if p.p50 > p.p99 {
		t.Errorf("wait_p50 %v > wait_p99 %v", p.p50, p.p99)
	}
	return p
}

func TestFlashSaleWithLock(t *testing.T) {
	srv := redistest.Start(t)
	var out, errOut bytes.Buffer // written by run's goroutines through lockedWriter, read after run
	cfg := config{Processes: 2, Buyers: 200, Stock: 20, Addr: srv.Addr(), Timeout: 45 * time.Second}
	res, err := run(t.Context(), cfg, &lockedWriter{w: &out}, &lockedWriter{w: &errOut})
	t.Logf("output:\n%s%s", out.String(), errOut.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Sold != 20 || res.Oversold != 0 || res.Buyers != 200 || res.Processes != 2 || res.FinalStock != 0 {
		t.Errorf("result %+v; want sold=20 oversold=0 buyers=200 processes=2 and no stock left", *res)
	}
	p := lastLine(t, out.String())
	if p.sold != 20 || p.oversold != 0 || p.buyers != 200 || p.processes != 2 {
		t.Errorf("RESULT line %q; want sold=20 oversold=0 buyers=200 processes=2", res.Line)
	}
	if p.p99 <= 0 {
		t.Errorf("wait_p99 = %v; buyers queued for the lock, so it should be positive", p.p99)
	}
}

// Without the lock the same sale oversells: the check the lock passes is not vacuous.
func TestFlashSaleWithoutLockOversells(t *testing.T) {
	srv := redistest.Start(t)
	var out, errOut bytes.Buffer
	cfg := config{Processes: 2, Buyers: 200, Stock: 20, NoLock: true, Addr: srv.Addr(), Timeout: 45 * time.Second}
	res, err := run(t.Context(), cfg, &lockedWriter{w: &out}, &lockedWriter{w: &errOut})
	t.Logf("output:\n%s%s", out.String(), errOut.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	p := lastLine(t, out.String())
	if p.oversold == 0 || res.Oversold != p.oversold || p.sold != res.Sold || p.sold <= 20 {
		t.Errorf("RESULT line %q; want sold > 20 and oversold > 0 without the lock", res.Line)
	}
	if p.oversold != p.sold-20 {
		t.Errorf("oversold=%d, want sold-stock = %d", p.oversold, p.sold-20)
	}
}

// runProgram runs this test binary as the program, with its own throwaway redis-server, and returns
// its standard output, failing the test if it does not exit 0.
func runProgram(t *testing.T, args ...string) string {
	t.Helper()
	redistest.Start(t) // skips (or fails, with REDISTEST_REQUIRE=1) without redis-server
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	t.Logf("output:\n%s%s", out.String(), errOut.String())
	if err != nil {
		t.Fatalf("program failed: %v", err)
	}
	return out.String()
}

// TestMainProgramCompares runs the program as `make demo` does (-compare), with its own throwaway
// redis-server, but smaller, and checks the two rows of its table and its exit status.
func TestMainProgramCompares(t *testing.T) {
	out := runProgram(t, "-compare", "-processes", "2", "-buyers", "100", "-stock", "10")
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		for _, label := range []string{"without the lock", "with the lock"} {
			if rest, ok := strings.CutPrefix(line, label+" "); ok && !strings.Contains(line, ":") {
				rows[label] = strings.Fields(rest)
			}
		}
	}
	if r := rows["with the lock"]; len(r) != 4 || r[0] != "10" || r[1] != "0" || r[2] != "0" {
		t.Errorf("row with the lock = %q; want sold 10, oversold 0, lost updates 0, a wait", r)
	}
	if r := rows["without the lock"]; len(r) != 4 || r[3] != "-" {
		t.Errorf("row without the lock = %q; want sold, oversold, lost updates and no wait", r)
	} else if sold, err := strconv.Atoi(r[0]); err != nil || sold < 10 {
		t.Errorf("without the lock sold %q; want at least the stock, 10", r[0])
	}
	if !strings.Contains(out, "with the lock: every item sold exactly once, no update lost") {
		t.Error("no closing line saying the locked sale sold every item once")
	}
}

// TestMainProgram runs the program once, with its own throwaway redis-server, and checks its RESULT
// line and exit status.
func TestMainProgram(t *testing.T) {
	p := lastLine(t, runProgram(t, "-processes", "2", "-buyers", "100", "-stock", "10"))
	if p.sold != 10 || p.oversold != 0 || p.buyers != 100 || p.processes != 2 {
		t.Errorf("RESULT sold=%d oversold=%d buyers=%d processes=%d; want 10 0 100 2", p.sold, p.oversold, p.buyers, p.processes)
	}

	// Bad flags exit 2.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-processes", "0")
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Errorf("-processes 0: got %v, want a non-zero exit", err)
	}
}
