//go:build unix

package frame

import (
	"syscall"
	"testing"
)

// cpuClock reads the process's user+system CPU time in nanoseconds. The
// benchmarks report it per op beside the wall-clock ns/op, which a busy
// machine inflates.
func cpuClock() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func reportCPU(b *testing.B, start int64) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(cpuClock()-start)/float64(b.N), "cpu-ns/op")
	}
}
