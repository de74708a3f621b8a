package leakcheck_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if os.Getenv("LEAKCHECK_TEST_LEAK") == "1" {
		// Child process of TestMainFailsOnLeak: leak a goroutine for good.
		go leakyWorker(make(chan struct{}), make(chan struct{}))
	}
	leakcheck.Main(m)
}

func TestMainFailsOnLeak(t *testing.T) {
	if os.Getenv("LEAKCHECK_TEST_LEAK") == "1" {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("takes leakcheck.DefaultTimeout")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainFailsOnLeak$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LEAKCHECK_TEST_LEAK=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("child exited with %v, want exit status 1; output:\n%s", err, out)
	}
	for _, want := range []string{"leakyWorker", "FAIL: goroutines leaked"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
}

//go:noinline
func leakyWorker(stop <-chan struct{}, done chan<- struct{}) {
	<-stop
	close(done)
}

func TestCheckFindsAndForgetsGoroutine(t *testing.T) {
	stop, done := make(chan struct{}), make(chan struct{})
	go leakyWorker(stop, done)

	err := leakcheck.Check(50 * time.Millisecond)
	if err == nil {
		t.Fatal("Check found no leak while leakyWorker is blocked")
	}
	if !strings.Contains(err.Error(), "leakyWorker") {
		t.Errorf("leak report does not name leakyWorker:\n%v", err)
	}

	close(stop)
	<-done
	if err := leakcheck.Check(5 * time.Second); err != nil {
		t.Fatalf("Check after the goroutine finished: %v", err)
	}
}

func TestCheckCleanWhenNothingRuns(t *testing.T) {
	if got := leakcheck.Leaked(); len(got) != 0 {
		t.Fatalf("Leaked() = %q, want none", got)
	}
}

func TestParallelSubtestsIgnored(t *testing.T) {
	// Subtests that are still running are testing-framework goroutines.
	release := make(chan struct{})
	t.Run("group", func(t *testing.T) {
		t.Run("waiting", func(t *testing.T) {
			t.Parallel()
			<-release
		})
		t.Run("checking", func(t *testing.T) {
			t.Parallel()
			defer close(release)
			if got := leakcheck.Leaked(); len(got) != 0 {
				t.Errorf("Leaked() = %q, want none", got)
			}
		})
	})
}
