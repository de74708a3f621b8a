//go:build !unix

package redistest

import "os"

// Job-control signals do not exist here; signal() reports
// errors.ErrUnsupported for nil signals.
var (
	sigTerm os.Signal
	sigStop os.Signal
	sigCont os.Signal
)
