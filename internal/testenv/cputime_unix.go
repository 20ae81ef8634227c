//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the process's user and system CPU time so far. Tests of work
// bounds compare it before and after, since the wall clock also counts
// whatever else the machine runs.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
