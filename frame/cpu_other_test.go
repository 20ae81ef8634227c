//go:build !unix

package frame

import "testing"

func cpuClock() int64 { return 0 }

func reportCPU(b *testing.B, start int64) {}
