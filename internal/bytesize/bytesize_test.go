package bytesize

import "testing"

func TestText(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1536 << 10: "1536 KiB", 1: "1 bytes"} {
		if got := Text(n); got != want {
			t.Errorf("Text(%d) = %q, want %q", n, got, want)
		}
	}
}
