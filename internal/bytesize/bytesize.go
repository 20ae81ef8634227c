// Package bytesize writes a byte count the way snuggen's messages and docs
// state a limit: in whole MiB or KiB when it is one, else in bytes.
package bytesize

import (
	"fmt"
	"strconv"
)

// Text writes n as "4 MiB", "64 KiB" or "1000 bytes".
func Text(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Approx writes n for a person reading a size that is no limit: "812 B",
// "14.2 KiB", "1.3 MiB".
func Approx(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
