package netgate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// BenchmarkNet compares one GET through the gate with the same GET by a
// plain http.Client to the same loopback server, in one run. bench/net.sh
// turns the output into the ratio of medians and the gate's requests/s.
//
//	go test -run '^$' -bench BenchmarkNet -count 5 ./hostkit/netgate/
func BenchmarkNet(b *testing.B) {
	payload := []byte(`{"items":[{"id":1,"title":"milk"},{"id":2,"title":"bread"}],"next":null}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(payload)
	}))
	defer srv.Close()
	url := srv.URL + "/items?page=1"

	direct := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer direct.CloseIdleConnections()
	directGet := func() error {
		hreq, _ := http.NewRequest("GET", url, nil)
		hreq.Header.Set("Accept", "application/json")
		resp, err := direct.Do(hreq)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}

	g := loopGate(b, Config{Rate: Rate{PerMinute: 1 << 30, InFlight: 1 << 20}}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	app := App{Key: "bench", Name: "Bench"}
	req := &frame.NetRequest{RequestID: "r1", InstanceID: "i1", URL: url, Method: "GET", Headers: map[string]string{"Accept": "application/json"}}
	gateGet := func() error {
		if r := g.Fetch(context.Background(), app, req); !r.OK {
			b.Fatalf("gate: %s", describeResp(r))
		}
		return nil
	}
	// Warm both paths (connections, the grant).
	for range 10 {
		directGet()
		gateGet()
	}

	serial := func(name string, do func() error) {
		b.Run(name, func(b *testing.B) {
			d := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := do(); err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(start))
			}
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
		})
	}
	parallel := func(name string, do func() error) {
		b.Run(name, func(b *testing.B) {
			b.SetParallelism(2)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := do(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
	serial("direct", directGet)
	serial("gate", gateGet)
	parallel("direct-parallel", directGet)
	parallel("gate-parallel", gateGet)
}

// BenchmarkScrub measures the scrub on a JSON answer with one configured
// secret: "clean-4KiB" and "clean" (1 MiB) hold no secret (every answer on a
// gate with a connection pays this),
// "echo" holds it 64 times in mixed escapes (only a reflecting answer pays
// this), "escapes" is clean text dense with escapes that decode in rounds.
//
//	go test -run '^$' -bench BenchmarkScrub ./hostkit/netgate/
func BenchmarkScrub(b *testing.B) {
	sc := newScrubber([]string{issueSecret})
	item := `{"id":12345,"title":"Buy milk & bread","url":"https:\/\/example.com\/items?id=12345&amp;page=2","note":"caf\u00e9 %20 done"},`
	clean := []byte(strings.Repeat(item, (1<<20)/len(item)))
	echo := slices.Clone(clean)
	for i := 0; i < 64; i++ {
		at := i * len(echo) / 64
		echo = slices.Insert(echo, at, []byte(mixed(issueSecret))...)
	}
	escapes := []byte(strings.Repeat(`\u0041&#66;%43&amp;\/`, (1<<20)/20))
	small := clean[:4096]
	for _, c := range []struct {
		name string
		data []byte
	}{{"clean-4KiB", small}, {"clean", clean}, {"echo", echo}, {"escapes", escapes}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				sc.scrub(c.data)
			}
		})
	}
}
