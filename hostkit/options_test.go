package hostkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// A theme or locale host-ready cannot carry is refused by New, naming the
// option and the fix, before it serves: sent, it would leave every
// app waiting for a snug.ready that never comes.
func TestNewRefusesOptionsThatWouldFreezeEveryApp(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  hostkit.Option
		want []string
	}{
		{"WithTheme in another case", hostkit.WithTheme("Dark"), []string{`WithTheme("Dark")`, "light, dark", "frame.ModeDark"}},
		{"WithTheme not a mode", hostkit.WithTheme("blue"), []string{`WithTheme("blue")`, "frame.ModeLight"}},
		{"WithLocale of one character", hostkit.WithLocale("e"), []string{`WithLocale("e")`, "BCP 47"}},
		{"broker options theme", hostkit.WithBrokerOptions(func(o *broker.Options) { o.Theme = "blue" }), []string{"Options.Theme", `"blue"`}},
		{"broker options locale", hostkit.WithBrokerOptions(func(o *broker.Options) { o.Locale = "x" }), []string{"Options.Locale", "BCP 47"}},
	} {
		h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("hello", []byte(`<!doctype html><title>Hello</title><p>hi`))), c.opt)
		if err == nil {
			h.Shutdown(context.Background())
			t.Errorf("%s: New accepted it", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
	h, err := hostkit.New(hostkit.WithTheme("dark"), hostkit.WithLocale("en-US"))
	if err != nil {
		t.Fatalf("valid theme and locale: %v", err)
	}
	h.Shutdown(context.Background())
}
