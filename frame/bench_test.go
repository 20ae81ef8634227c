package frame

import (
	"encoding/json"
	"testing"
)

// benchMix is a realistic mix of app→host frames, as a host receives them.
var benchMix = []string{
	`{"v":1,"type":"snug:app-message","requestId":"req-7f3a9c","instanceId":"inst-2b8e41","appId":"com.example.flashcards","action":"generate-cards","payload":{"topic":"photosynthesis","count":5,"level":"intro"},"state":{"deck":"biology","seen":[1,2,3]},"responseSchema":{"type":"object","required":["cards"],"properties":{"cards":{"type":"array"}}}}`,
	`{"v":1,"type":"snug:net-request","requestId":"req-8812","instanceId":"inst-2b8e41","url":"https://api.example.com/v1/items?page=2&limit=50","method":"POST","headers":{"Content-Type":"application/json","Accept":"application/json","X-Request-Id":"abc-123"},"body":"{\"name\":\"milk\",\"qty\":2}"}`,
	`{"v":1,"type":"snug:db-request","requestId":"req-99","instanceId":"inst-2b8e41","op":"exec","sql":"insert into todo (title, done, due) values (?, ?, ?)","params":["Buy milk",0,"2026-12-01"]}`,
	`{"v":1,"type":"snug:open-url-request","requestId":"req-100","instanceId":"inst-2b8e41","url":"https://example.com/docs/getting-started#install"}`,
	`{"v":1,"type":"snug:app-event","instanceId":"inst-2b8e41","event":"resize","data":{"height":612}}`,
	`{"v":1,"type":"snug:app-cancel","requestId":"req-7f3a9c","instanceId":"inst-2b8e41"}`,
}

// BenchmarkParse measures one frame of the mix per op, from raw bytes to
// verdict: the generated decoder (Parse, including refinements) against
// santhosh-tekuri/jsonschema/v5 compiled from schemas/ (decode with UseNumber,
// pick the schema by type, validate), and plain encoding/json into the struct
// with no checks at all, for scale.
func BenchmarkParse(b *testing.B) {
	raws := make([][]byte, len(benchMix))
	for i, s := range benchMix {
		raws[i] = []byte(s)
		if f, err := Parse(raws[i]); err != nil || f == nil {
			b.Fatalf("mix frame %d: %v", i, err)
		}
	}
	byType := compiledSchemas(b)
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuClock())
		for i := 0; b.Loop(); i++ {
			if f, err := Parse(raws[i%len(raws)]); err != nil || f == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonschema", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuClock())
		for i := 0; b.Loop(); i++ {
			if ok, known, err := schemaVerdict(byType, raws[i%len(raws)]); !ok || !known || err != nil {
				b.Fatal("jsonschema rejected a mix frame", err)
			}
		}
	})
	targets := []func() any{
		func() any { return new(AppMessage) }, func() any { return new(NetRequest) }, func() any { return new(DBRequest) },
		func() any { return new(OpenURLRequest) }, func() any { return new(AppEvent) }, func() any { return new(AppCancel) },
	}
	b.Run("encoding-json-no-checks", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuClock())
		for i := 0; b.Loop(); i++ {
			if err := json.Unmarshal(raws[i%len(raws)], targets[i%len(raws)]()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkParseImport measures a 1 MiB db import frame (the data a
// base64 string).
func BenchmarkParseImport(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i%64]
	}
	raw := []byte(`{"v":1,"type":"snug:db-request","requestId":"r1","instanceId":"inst-2b8e41","op":"import","data":"` + string(data) + `"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if f, err := Parse(raw); err != nil || f == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate measures validation of an already-decoded frame (values
// and refinements, what Parse runs after decoding): the goal is under 100 ns
// and no allocation on the happy path.
func BenchmarkValidate(b *testing.B) {
	frames := make([]Frame, len(benchMix))
	for i, s := range benchMix {
		f, err := Parse([]byte(s))
		if err != nil {
			b.Fatal(err)
		}
		frames[i] = f
	}
	b.Run("mix", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuClock())
		for i := 0; b.Loop(); i++ {
			if err := validate(frames[i%len(frames)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	nr := frames[1].(*NetRequest)
	b.Run("net-request", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuClock())
		for b.Loop() {
			if err := nr.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestValidateDoesNotAllocate(t *testing.T) {
	for _, s := range benchMix {
		f, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = validate(f) }); n != 0 {
			t.Errorf("%s: Validate allocates %v times on a valid frame", f.FrameType(), n)
		}
	}
}
