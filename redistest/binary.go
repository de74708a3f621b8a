package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// ErrNoBinary is returned, wrapped, by [StartProcess] when the redis-server
// binary cannot be found: $REDIS_SERVER_BIN names a file that is missing or
// not executable, or it is unset and "redis-server" is not in $PATH. Test with
// errors.Is.
var ErrNoBinary = errors.New("redis-server binary not found")

// installHint is appended to ErrNoBinary messages and skip reasons.
const installHint = "install it (e.g. apt-get install redis-server) or set REDIS_SERVER_BIN to its path"

// serverBinary returns the path of the redis-server binary, or an error
// wrapping ErrNoBinary.
func serverBinary() (string, error) {
	if p := os.Getenv("REDIS_SERVER_BIN"); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%w: REDIS_SERVER_BIN=%q: %v; %s", ErrNoBinary, p, err, installHint)
		}
		return path, nil
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("%w in $PATH; %s", ErrNoBinary, installHint)
	}
	return path, nil
}
