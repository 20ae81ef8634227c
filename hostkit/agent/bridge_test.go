package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

func TestBridgeStreamsAndAnswers(t *testing.T) {
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			t.Parallel()
			reply := `{"message":"Three items left.","count":3}`
			fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				wf.stream(w, chunked(reply, 7), true)
			})
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{})
			var frames []string
			data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "slot-1"}, appMessage(`{"list":"groceries","Authorization":"Bearer APP-SECRET"}`, "", ""),
				func(text string) { frames = append(frames, text) })
			if ferr != nil {
				t.Fatalf("Ask: %+v", ferr)
			}
			if string(data) != reply {
				t.Fatalf("data %s, want %s", data, reply)
			}
			// Cumulative: each frame extends the previous one, the last is the whole reply.
			if len(frames) != len(chunked(reply, 7)) {
				t.Fatalf("%d streaming frames, want %d: %q", len(frames), len(chunked(reply, 7)), frames)
			}
			for i := 1; i < len(frames); i++ {
				if !strings.HasPrefix(frames[i], frames[i-1]) || len(frames[i]) <= len(frames[i-1]) {
					t.Fatalf("frame %d %q does not extend %q", i, frames[i], frames[i-1])
				}
			}
			if frames[len(frames)-1] != reply {
				t.Fatalf("last frame %q", frames[len(frames)-1])
			}

			req := fa.Request(0)
			if req.path != wf.path {
				t.Errorf("posted to %s, want %s", req.path, wf.path)
			}
			switch wf.name {
			case "openai":
				if got := req.header.Get("Authorization"); got != "Bearer "+testKey {
					t.Errorf("Authorization %q", got)
				}
			case "anthropic":
				if got := req.header.Get("x-api-key"); got != testKey {
					t.Errorf("x-api-key %q", got)
				}
				if req.header.Get("anthropic-version") == "" {
					t.Errorf("no anthropic-version header")
				}
			}
			body := string(req.body)
			if strings.Contains(body, testKey) {
				t.Errorf("the API key is in the request body: %s", body)
			}
			if strings.Contains(body, "APP-SECRET") {
				t.Errorf("the app's credential reached the agent (C1): %s", body)
			}
			var sent struct {
				Stream   bool   `json:"stream"`
				System   string `json:"system"`
				Messages []struct {
					Role, Content string
				} `json:"messages"`
			}
			if err := json.Unmarshal(req.body, &sent); err != nil {
				t.Fatal(err)
			}
			if !sent.Stream {
				t.Errorf("stream not requested")
			}
			system, user := sent.System, ""
			for _, m := range sent.Messages {
				switch m.Role {
				case "system":
					system = m.Content
				case "user":
					user = m.Content
				}
			}
			if !strings.Contains(system, "ONLY a JSON object") {
				t.Errorf("system prompt lacks the reply contract: %q", system)
			}
			if env, ok := agent.Detect(user); !ok || env.Action != "summarize" {
				t.Errorf("user message is not the envelope: %q", user)
			}
		})
	}
}

func TestBridgeSchemaPromptAndSuppression(t *testing.T) {
	wf := wires[0]
	reply := `{"title":"milk","done":false}`
	fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) { wf.stream(w, chunked(reply, 5), true) })
	for _, suppress := range []bool{false, true} {
		br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{SuppressSchemaStreaming: suppress})
		n := 0
		data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", todoSchema), func(string) { n++ })
		if ferr != nil || string(data) != reply {
			t.Fatalf("suppress=%v: %s %+v", suppress, data, ferr)
		}
		if suppress && n != 0 || !suppress && n == 0 {
			t.Errorf("suppress=%v: %d streaming frames", suppress, n)
		}
	}
	if body := string(fa.Request(0).body); !strings.Contains(body, `additionalProperties`) {
		t.Errorf("the responseSchema is not in the prompt: %s", body)
	}
}

// TestBridgeStall: an agent that starts and then never finishes is ended by
// the caller's context: Ask returns CANCELLED (the agent never finishes,
// so nothing else could end it) and the agent sees its request end.
func TestBridgeStall(t *testing.T) {
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			t.Parallel()
			ended := make(chan struct{}, 1)
			fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				wf.stream(w, []string{`{"message":`}, false)
				<-r.Context().Done()
				ended <- struct{}{}
			})
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			streamed := 0
			var ferr *frame.Error
			finishes(t, "Ask cancelled after the agent started", func() {
				// The caller gives up once the agent has started to answer.
				_, ferr = br.Ask(ctx, agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), func(string) { streamed++; cancel() })
			})
			if ferr == nil || ferr.Code != frame.CodeCancelled {
				t.Fatalf("err %+v, want CANCELLED", ferr)
			}
			if streamed != 1 {
				t.Errorf("streamed %d frames before the stall, want 1", streamed)
			}
			if br.Remaining("k") != frame.ParseFailureBudget {
				t.Errorf("a cancelled request spent parse budget")
			}
			happens(t, "the stalled agent's request to end", ended)

			// A server that accepts and never answers, not even headers.
			arrived, silentEnded := make(chan struct{}, 1), make(chan struct{}, 1)
			silent := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				arrived <- struct{}{}
				<-r.Context().Done()
				silentEnded <- struct{}{}
			})
			br = agent.NewBridge(wf.backend(t, silent.srv.URL), agent.Options{})
			ctx, cancel = context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-arrived
				cancel()
			}()
			finishes(t, "Ask to a silent server, cancelled", func() {
				_, ferr = br.Ask(ctx, agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
			})
			if ferr == nil || ferr.Code != frame.CodeCancelled {
				t.Fatalf("silent server: %+v, want CANCELLED", ferr)
			}
			happens(t, "the silent server's request to end", silentEnded)
		})
	}
}

// TestBridgeTimeout: the host's own bound on an agent that stalls is a
// NETWORK_ERROR (retryable), not a cancellation. The agent never finishes,
// so only the bound ends the call; it ends the agent's request too, and
// not before the bound (a timer never fires early).
func TestBridgeTimeout(t *testing.T) {
	ended := make(chan struct{}, 1)
	fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
		wires[0].stream(w, []string{`{`}, false)
		<-r.Context().Done()
		ended <- struct{}{}
	})
	const bound = 100 * time.Millisecond
	br := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{Timeout: bound})
	start := time.Now()
	var ferr *frame.Error
	finishes(t, "Ask to a stalled agent under Options.Timeout", func() {
		_, ferr = br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
	})
	if el := time.Since(start); el < bound {
		t.Errorf("ended after %v, before the bound of %v", el, bound)
	}
	if ferr == nil || ferr.Code != frame.CodeNetworkError || !ferr.Retryable {
		t.Fatalf("%+v, want retryable NETWORK_ERROR", ferr)
	}
	happens(t, "the stalled agent's request to end", ended)
}

// TestBridgeDropMidStream: the connection dies before the reply is complete;
// the partial text is not parsed as an answer.
func TestBridgeDropMidStream(t *testing.T) {
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			t.Parallel()
			fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				// A complete-looking object so far, then the connection drops.
				wf.stream(w, []string{`{"message":"partial"}`}, false)
				panic(http.ErrAbortHandler)
			})
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{})
			_, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
			if ferr == nil || ferr.Code != frame.CodeNetworkError || !ferr.Retryable {
				t.Fatalf("err %+v, want retryable NETWORK_ERROR", ferr)
			}
			// A stream that ends cleanly but without its end marker is just as incomplete.
			fa2 := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				wf.stream(w, []string{`{"message":"partial"}`}, false)
			})
			br2 := agent.NewBridge(wf.backend(t, fa2.srv.URL), agent.Options{})
			if _, ferr := br2.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil); ferr == nil || ferr.Code != frame.CodeNetworkError {
				t.Fatalf("unterminated stream: %+v, want NETWORK_ERROR", ferr)
			}
		})
	}
}

// TestBridgeThreadConflict: 409s are retried after each delay of
// frame.ThreadConflictBackoff, then answered THREAD_CONFLICT.
func TestBridgeThreadConflict(t *testing.T) {
	t.Run("always busy", func(t *testing.T) {
		t.Parallel()
		// What happened, in order: each request the agent saw, each backoff
		// the bridge asked for (the wait is the test's, so it ends at once).
		var mu sync.Mutex
		var events []string
		event := func(e string) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		}
		fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
			event("request")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":{"message":"thread is busy","type":"conflict"}}`))
		})
		br := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{})
		agent.SetBackoff(br, func(ctx context.Context, d time.Duration) error {
			event("wait " + d.String())
			return nil
		})
		_, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
		if ferr == nil || ferr.Code != frame.CodeThreadConflict || !ferr.Retryable {
			t.Fatalf("err %+v, want retryable THREAD_CONFLICT", ferr)
		}
		want := []string{"request"}
		for _, d := range frame.ThreadConflictBackoff {
			want = append(want, "wait "+d.String(), "request")
		}
		mu.Lock()
		got := slices.Clone(events)
		mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("requests and backoffs %q, want %q", got, want)
		}
		if last := frame.ThreadConflictBackoff[len(frame.ThreadConflictBackoff)-1]; ferr.RetryAfterMs == nil || *ferr.RetryAfterMs != int(last/time.Millisecond) {
			t.Errorf("retryAfterMs %v, want the last backoff %v", ferr.RetryAfterMs, last)
		}
		if br.Remaining("k") != frame.ParseFailureBudget {
			t.Errorf("a conflict spent parse budget")
		}
	})
	t.Run("busy twice then free", func(t *testing.T) {
		t.Parallel()
		fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
			if hit <= 2 {
				http.Error(w, "busy", http.StatusConflict)
				return
			}
			wires[1].stream(w, []string{`{"ok":`, `true}`}, true)
		})
		// The real wait: the answer cannot come before both backoffs (a
		// timer never fires early).
		br := agent.NewBridge(wires[1].backend(t, fa.srv.URL), agent.Options{})
		start := time.Now()
		data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
		if ferr != nil || string(data) != `{"ok":true}` {
			t.Fatalf("%s %+v", data, ferr)
		}
		if want := frame.ThreadConflictBackoff[0] + frame.ThreadConflictBackoff[1]; time.Since(start) < want {
			t.Errorf("answered after %v, before the backoff of %v", time.Since(start), want)
		}
		if fa.Hits() != 3 {
			t.Errorf("%d attempts, want 3", fa.Hits())
		}
	})
	t.Run("cancelled during backoff", func(t *testing.T) {
		t.Parallel()
		fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
			http.Error(w, "busy", http.StatusConflict)
		})
		br := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{})
		// The bridge's own wait, made an hour long: only the context can
		// end it. The caller gives up once the bridge is waiting.
		waiting := make(chan time.Duration, 1)
		var waitErr error
		agent.SetBackoff(br, func(ctx context.Context, d time.Duration) error {
			waiting <- d
			waitErr = agent.Wait(ctx, time.Hour)
			return waitErr
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		asked := make(chan time.Duration, 1)
		go func() {
			d := <-waiting
			cancel()
			asked <- d
		}()
		var ferr *frame.Error
		finishes(t, "Ask cancelled during the backoff", func() {
			_, ferr = br.Ask(ctx, agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
		})
		if ferr == nil || ferr.Code != frame.CodeCancelled {
			t.Fatalf("%+v, want CANCELLED", ferr)
		}
		if d := <-asked; d != frame.ThreadConflictBackoff[0] {
			t.Errorf("first backoff %v, want %v", d, frame.ThreadConflictBackoff[0])
		}
		if !errors.Is(waitErr, context.Canceled) || fa.Hits() != 1 {
			t.Errorf("the wait ended with %v after %d attempts; want the context's end after 1", waitErr, fa.Hits())
		}
	})
}

// TestBridgeParseBudget: prose replies are PARSE_FAILED with a countdown; the
// fourth request is refused without reaching the agent until Reset; a good
// reply resets the count.
func TestBridgeParseBudget(t *testing.T) {
	prose := "I think the list looks great! Let me know if you need anything else."
	var good atomic.Bool
	fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
		if good.Load() {
			wires[0].stream(w, []string{`{"message":"ok"}`}, true)
			return
		}
		wires[0].stream(w, chunked(prose, 10), true)
	})
	br := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{})
	ask := func(key string) (json.RawMessage, *frame.Error) {
		return br.Ask(context.Background(), agent.Caller{App: "todo", Instance: key}, appMessage("", "", ""), nil)
	}
	for i := 1; i <= frame.ParseFailureBudget; i++ {
		_, ferr := ask("a")
		if ferr == nil || ferr.Code != frame.CodeParseFailed {
			t.Fatalf("attempt %d: %+v, want PARSE_FAILED", i, ferr)
		}
		if ferr.RawExcerpt == nil || *ferr.RawExcerpt != prose {
			t.Errorf("attempt %d: rawExcerpt %v", i, ferr.RawExcerpt)
		}
		left := frame.ParseFailureBudget - i
		if ferr.AttemptsRemaining == nil || *ferr.AttemptsRemaining != left {
			t.Fatalf("attempt %d: attemptsRemaining %v, want %d", i, ferr.AttemptsRemaining, left)
		}
		if ferr.Retryable != (left > 0) {
			t.Errorf("attempt %d: retryable %v with %d left", i, ferr.Retryable, left)
		}
	}
	hits := fa.Hits()
	_, ferr := ask("a")
	if ferr == nil || ferr.Code != frame.CodeParseFailed || ferr.Retryable || *ferr.AttemptsRemaining != 0 || ferr.RawExcerpt != nil {
		t.Fatalf("spent budget: %+v", ferr)
	}
	if fa.Hits() != hits {
		t.Fatalf("a refused instance still reached the agent")
	}
	// Another instance has its own budget.
	if _, ferr := ask("b"); ferr == nil || *ferr.AttemptsRemaining != frame.ParseFailureBudget-1 {
		t.Fatalf("instance b: %+v", ferr)
	}
	if err := br.Reset("a"); err != nil {
		t.Fatal(err)
	}
	if err := br.Reset(""); err == nil {
		t.Errorf("Reset of an empty key succeeded")
	}
	_, ferr = ask("a")
	if ferr == nil || *ferr.AttemptsRemaining != frame.ParseFailureBudget-1 || fa.Hits() != hits+2 {
		t.Fatalf("after Reset: %+v (hits %d)", ferr, fa.Hits())
	}
	// Consecutive: a success clears the count.
	good.Store(true)
	if _, ferr := ask("b"); ferr != nil {
		t.Fatal(ferr)
	}
	good.Store(false)
	if _, ferr := ask("b"); ferr == nil || *ferr.AttemptsRemaining != frame.ParseFailureBudget-1 {
		t.Fatalf("after a success: %+v", ferr)
	}
}

func TestBridgeRepliesThroughWire(t *testing.T) {
	cases := []struct {
		name, reply, schema, want, code string
	}{
		{"fenced", "Here is the JSON:\n```json\n{\"title\":\"milk\",\"done\":true}\n```", todoSchema, `{"title":"milk","done":true}`, ""},
		{"embedded", `Sure — {"title":"eggs","done":false} is your item.`, todoSchema, `{"title":"eggs","done":false}`, ""},
		{"schema violation", `{"title":"eggs","done":"yes"}`, todoSchema, "", frame.CodeParseFailed},
		{"array", `[{"title":"eggs","done":false}]`, "", "", frame.CodeParseFailed},
		{"bad schema", `{}`, `{"type":"no-such-type"}`, "", frame.CodeMalformed},
	}
	for _, wf := range wires {
		for _, c := range cases {
			t.Run(wf.name+"/"+c.name, func(t *testing.T) {
				fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) { wf.stream(w, chunked(c.reply, 9), true) })
				br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{})
				data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", c.schema), nil)
				if c.code == "" {
					if ferr != nil || string(data) != c.want {
						t.Fatalf("%s %+v, want %s", data, ferr, c.want)
					}
					return
				}
				if ferr == nil || ferr.Code != c.code {
					t.Fatalf("%s %+v, want %s", data, ferr, c.code)
				}
				if c.code == frame.CodeMalformed {
					if fa.Hits() != 0 || br.Remaining("k") != frame.ParseFailureBudget {
						t.Errorf("a bad schema reached the agent or spent budget")
					}
				}
			})
		}
	}
}

func TestBackendHTTPErrors(t *testing.T) {
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			t.Parallel()
			fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				switch hit {
				case 1: // an endpoint that echoes the key it was given
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusUnauthorized)
					w.Write([]byte(`{"error":{"message":"invalid key ` + testKey + `"}}`))
				case 2:
					http.Error(w, "upstream exploded", http.StatusInternalServerError)
				default: // an error event in the stream
					sseHeader(w)
					w.Write([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
				}
			})
			var logged []error
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{Log: func(key string, err error) { logged = append(logged, err) }})
			host := strings.TrimPrefix(fa.srv.URL, "http://")
			for i := 1; i <= 3; i++ {
				_, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
				if ferr == nil || ferr.Code != frame.CodeNetworkError || !ferr.Retryable {
					t.Fatalf("hit %d: %+v, want retryable NETWORK_ERROR", i, ferr)
				}
				// The app learns what failed, not where the host's agent lives or what it said.
				if strings.Contains(ferr.Message, testKey) || strings.Contains(ferr.Message, host) || strings.Contains(ferr.Message, "exploded") {
					t.Errorf("hit %d: the app's error says too much: %s", i, ferr.Message)
				}
			}
			if len(logged) != 3 {
				t.Fatalf("logged %d errors, want 3", len(logged))
			}
			// The host's log has the detail, with the key redacted.
			if msg := logged[0].Error(); strings.Contains(msg, testKey) || !strings.Contains(msg, "[REDACTED]") || !strings.Contains(msg, "401") {
				t.Errorf("log 1: %s", msg)
			}
			if msg := logged[1].Error(); !strings.Contains(msg, "exploded") {
				t.Errorf("log 2: %s", msg)
			}
			if msg := logged[2].Error(); !strings.Contains(msg, "Overloaded") {
				t.Errorf("log 3: %s", msg)
			}
			// Nothing listening.
			fa.srv.Close()
			_, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
			if ferr == nil || ferr.Code != frame.CodeNetworkError {
				t.Fatalf("closed server: %+v, want NETWORK_ERROR", ferr)
			}
		})
	}
}

// TestErrorMessageFitsFrame: a long reason (here a schema compiler's report
// on a huge schema) is cut so the error object stays valid.
func TestErrorMessageFitsFrame(t *testing.T) {
	// The compiler's report quotes the missing reference in full.
	schema := `{"type":"object","properties":{"a":{"$ref":"#/$defs/` + strings.Repeat("x", 3000) + `"}}}`
	br := agent.NewBridge(agent.BackendFunc(func(context.Context, agent.Completion, func(string)) (string, error) {
		t.Fatal("the agent was called")
		return "", nil
	}), agent.Options{})
	_, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", schema), nil)
	if ferr == nil || ferr.Code != frame.CodeMalformed {
		t.Fatalf("%+v", ferr)
	}
	if n := utf8.RuneCountInString(ferr.Message); n < 500 {
		t.Fatalf("the message (%d code points) is too short to test the cut", n)
	}
	raw, err := json.Marshal(&frame.AppResponse{RequestID: "r1", Error: ferr})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&frame.AppResponse{RequestID: "r1", Error: ferr}).Validate(); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

// TestOpenAINonStreamingServer: a compatible server that ignores "stream"
// and answers one JSON completion still works.
func TestOpenAINonStreamingServer(t *testing.T) {
	fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(`{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"{\"message\":\"hi\"}"},"finish_reason":"stop"}]}`))
	})
	br := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{})
	var last string
	data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), func(s string) { last = s })
	if ferr != nil || string(data) != `{"message":"hi"}` || last != `{"message":"hi"}` {
		t.Fatalf("%s %+v (last stream %q)", data, ferr, last)
	}
}
