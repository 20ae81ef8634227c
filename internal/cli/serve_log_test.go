package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit/agent/openai"
	"github.com/snuggen/snuggen/hostkit/frame"
)

// An agent failure's detail (the app is told only a code) reaches the
// person running serve on stderr, prefixed "snuggen serve:". The request
// goes through the real relay as the runner page sends it.
func TestServeLogsAgentFailuresToStderr(t *testing.T) {
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, `{"error":{"message":"the model is overloaded: canary-detail"}}`, http.StatusInternalServerError)
	}))
	defer agentSrv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "openai", agentURL: agentSrv.URL + "/v1", model: "test-model",
		getenv: func(k string) string {
			if k == openai.EnvAPIKey {
				return "test-key"
			}
			return ""
		}}

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, &IO{In: strings.NewReader(""), Out: pw, Err: &stderr}, o, []string{dir})
		pw.Close()
	}()
	defer func() {
		cancel()
		go io.Copy(io.Discard, pr)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("serve printed nothing; stderr: %s", stderr.String())
	}
	fields := strings.Fields(sc.Text())
	origin := strings.TrimSuffix(fields[len(fields)-1], "/?app=hello")

	wctx, wcancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer wcancel()
	ws, _, err := websocket.Dial(wctx, strings.Replace(origin, "http", "ws", 1)+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	send := func(s string) {
		t.Helper()
		if err := ws.Write(wctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	// next reads until a frame of type typ reaches slot s1.
	next := func(typ string) map[string]any {
		t.Helper()
		for {
			_, data, err := ws.Read(wctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v; stderr: %s", typ, err, stderr.String())
			}
			var m struct {
				T     string         `json:"t"`
				Frame map[string]any `json:"frame"`
			}
			if json.Unmarshal(data, &m) == nil && m.T == "frame" && m.Frame["type"] == typ {
				return m.Frame
			}
		}
	}
	send(`{"t":"mount","slot":"s1","app":"hello"}`)
	send(`{"t":"load","slot":"s1"}`)
	inst, _ := next(frame.TypeHostReady)["instanceId"].(string)
	send(fmt.Sprintf(`{"t":"frame","slot":"s1","frame":{"v":1,"type":%q,"requestId":"r1","instanceId":%q,"appId":"test.hello","action":"greet"}}`,
		frame.TypeAppMessage, inst))
	res := next(frame.TypeAppResponse)
	if res["ok"] != false {
		t.Fatalf("app-response = %v, want an error", res)
	}
	if msg := fmt.Sprint(res["error"]); strings.Contains(msg, "canary-detail") {
		t.Errorf("the app was told the agent's error text: %s", msg)
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		log := stderr.String()
		var line string
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "canary-detail") || strings.Contains(l, "500") {
				line = l
				break
			}
		}
		if line != "" {
			if !strings.HasPrefix(line, "snuggen serve: ") {
				t.Fatalf("log line %q lacks the prefix", line)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stderr has no line about the agent failure: %q", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Log lines from many goroutines come out whole, one per line.
func TestStderrLogWritesWholeLines(t *testing.T) {
	var buf lockedBuffer
	logf := stderrLog(&buf)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { logf("panic in handler %d:\n%s\n", i, strings.Repeat("stack ", 50)) })
	}
	wg.Wait()
	out := buf.String()
	if n := strings.Count(out, "snuggen serve: panic in handler "); n != 20 {
		t.Fatalf("%d prefixed entries, want 20:\n%s", n, out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "snuggen serve: ") && !strings.HasPrefix(l, "stack ") {
			t.Fatalf("line %q is neither an entry nor its stack: entries interleaved", l)
		}
	}
}
