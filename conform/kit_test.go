package conform

import (
	"context"
	"strings"
	"testing"
)

func TestKitBuilds(t *testing.T) {
	html, err := Kit(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "snug-conform") {
		t.Fatal("no app id")
	}
	t.Logf("%d bytes", len(html))
}
