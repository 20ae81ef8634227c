//go:build unix

package broker_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far: benchmarks report
// CPU per op next to wall time, which other load on the machine inflates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
