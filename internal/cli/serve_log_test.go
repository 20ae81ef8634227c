package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
)

// askThroughServe runs serve with o on the hello app, asks once through the
// real relay as the runner page would (mount, load, an app-message frame),
// and returns the terminal app-response frame and serve's stderr.
func askThroughServe(t *testing.T, o *serveOptions) (map[string]any, *lockedBuffer) {
	t.Helper()
	return requestThroughServe(t, o, frame.TypeAppMessage, `"appId":"test.hello","action":"greet"`)
}

// requestThroughServe is askThroughServe for a request of type typ with
// the frame's own members (JSON, after requestId and instanceId); it
// returns the request's terminal answer.
func requestThroughServe(t *testing.T, o *serveOptions, typ, members string) (map[string]any, *lockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, &IO{In: strings.NewReader(""), Out: pw, Err: stderr}, o, []string{dir})
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
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
	ws.SetReadLimit(-1) // streaming frames can be as large as a frame
	send := func(s string) {
		t.Helper()
		if err := ws.Write(wctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	// next reads until a frame of type typ comes.
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
			if json.Unmarshal(data, &m) == nil && m.T == "frame" && m.Frame["type"] == typ && m.Frame["streaming"] != true {
				return m.Frame
			}
		}
	}
	send(`{"t":"mount","slot":"s1","app":"hello"}`)
	send(`{"t":"load","slot":"s1"}`)
	inst, _ := next(frame.TypeHostReady)["instanceId"].(string)
	send(fmt.Sprintf(`{"t":"frame","slot":"s1","frame":{"v":1,"type":%q,"requestId":"r1","instanceId":%q,%s}}`, typ, inst, members))
	return next(frame.AnswerType(typ)), stderr
}

// A refused open-url tells the app why (the reason in the answer) and the
// person running serve (stderr): the frame's own check (http, not https)
// and the host's policy (a file name that hides its type) alike.
func TestServeLogsRefusals(t *testing.T) {
	for _, c := range []struct{ typ, fields, want string }{
		{frame.TypeOpenURLRequest, `"url":"http://example.com/canary-open"`, "must start with https://"},
		{frame.TypeSaveFileRequest, `"name":"canary\u202etxt.exe","data":"eA=="`, "U+202E"},
	} {
		o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv}
		res, stderr := requestThroughServe(t, o, c.typ, c.fields)
		reason, _ := res["reason"].(string)
		if res["status"] != frame.StatusRefused || !strings.Contains(reason, c.want) {
			t.Fatalf("%s answer = %v, want refused with %q", c.typ, res, c.want)
		}
		l := logLine(t, stderr, "refused")
		for _, want := range []string{"level=INFO", `msg="request refused"`, "app=hello", "frame=" + frame.AnswerType(c.typ), "request=r1", c.want} {
			if !strings.Contains(l, want) {
				t.Errorf("log line %q: want %s (the app, the request and the reason %q as attributes)", l, want, reason)
			}
		}
	}
}

// logLine waits for a line of log containing want and returns it. The
// deadline only bounds a hang: the line comes when the host logs it.
func logLine(t *testing.T, log *lockedBuffer, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.Contains(l, want) {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stderr has no line with %q: %q", want, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An agent failure's detail (the app is told only a code) reaches the
// person running serve on stderr, prefixed "snuggen serve:".
func TestServeLogsAgentFailuresToStderr(t *testing.T) {
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, `{"error":{"message":"the model is overloaded: canary-detail"}}`, http.StatusInternalServerError)
	}))
	defer agentSrv.Close()
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "openai", agentURL: agentSrv.URL + "/v1", model: "test-model",
		getenv: func(k string) string {
			if k == openai.EnvAPIKey {
				return "test-key"
			}
			return ""
		}}
	res, stderr := askThroughServe(t, o)
	if res["ok"] != false {
		t.Fatalf("app-response = %v, want an error", res)
	}
	if msg := fmt.Sprint(res["error"]); strings.Contains(msg, "canary-detail") {
		t.Errorf("the app was told the agent's error text: %s", msg)
	}
	if l := logLine(t, stderr, "canary-detail"); !strings.Contains(l, `msg="agent request failed"`) || !strings.Contains(l, "instance=") {
		t.Fatalf("log line %q: want what failed and the instance", l)
	}
}

// A handler's panic is answered HOST_ERROR to the app, and its stack goes
// to stderr under the prefix.
func TestServeLogsHandlerPanicsWithStack(t *testing.T) {
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv,
		agentFor: agent.BackendFunc(func(context.Context, agent.Completion, func(string)) (string, error) {
			panic("canary-panic")
		})}
	res, stderr := askThroughServe(t, o)
	if e, _ := res["error"].(map[string]any); res["ok"] != false || e["code"] != frame.CodeHostError {
		t.Fatalf("app-response = %v, want %s", res, frame.CodeHostError)
	}
	l := logLine(t, stderr, "canary-panic")
	if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, `msg="handler panic"`) || !strings.Contains(l, "app=hello") {
		t.Fatalf("log line %q: want an error record of the panic and its app", l)
	}
	if log := stderr.String(); !strings.Contains(log, "goroutine ") || !strings.Contains(log, ".go:") {
		t.Fatalf("no stack in the log: %q", log)
	}
}

// With --log-format json each record is one JSON object a line, its
// attributes as members: a refused request names the app, the frame, the
// request and the reason.
func TestServeLogsJSON(t *testing.T) {
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv, logFormat: "json"}
	_, stderr := requestThroughServe(t, o, frame.TypeOpenURLRequest, `"url":"http://example.com/canary-open"`)
	l := logLine(t, stderr, "request refused")
	var rec map[string]any
	if err := json.Unmarshal([]byte(l), &rec); err != nil {
		t.Fatalf("log line %q is not JSON: %v", l, err)
	}
	for k, want := range map[string]string{"level": "INFO", "msg": "request refused", "app": "hello", "frame": frame.TypeOpenURLResult, "request": "r1"} {
		if rec[k] != want {
			t.Errorf("record %v: %s = %v, want %q", rec, k, rec[k], want)
		}
	}
	if r, _ := rec["reason"].(string); !strings.Contains(r, "https://") {
		t.Errorf("record %v: want the reason", rec)
	}
	if _, ok := rec["time"]; !ok {
		t.Errorf("record %v has no time", rec)
	}
}

// A --log-format serve does not know is a usage error, before anything is
// served.
func TestServeLogFormatUnknown(t *testing.T) {
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv, logFormat: "xml"}
	err := runServe(context.Background(), &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, o, []string{"testdata/none.html"})
	var fe *FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "--log-format") {
		t.Fatalf("runServe = %v, want a usage error naming --log-format", err)
	}
}

// Records from many goroutines come out whole, one JSON object per line,
// a multi-line message included.
func TestServeLogWritesWholeRecords(t *testing.T) {
	var buf lockedBuffer
	logger, err := newLogger(&buf, "json")
	if err != nil {
		t.Fatal(err)
	}
	logf := logfOf(logger, "serve")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { logf("panic in handler %d:\n%s\n", i, strings.Repeat("stack ", 50)) })
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines, want 20 records:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		var rec struct{ Msg, Component string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil || !strings.HasPrefix(rec.Msg, "panic in handler ") || rec.Component != "serve" {
			t.Fatalf("line %q is not one whole record (%v)", l, err)
		}
	}
}

// mcp's log lines (its stdout is the protocol) come out whole, one per
// line, prefixed.
func TestStderrLogWritesWholeLines(t *testing.T) {
	var buf lockedBuffer
	logf := stderrLogOf(&buf, "serve")
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

// TestServeAgentMaxReply: --agent-max-reply bounds what serve reads from an
// agent that never stops: the app gets PARSE_FAILED naming the limit, and
// the cut goes to stderr.
func TestServeAgentMaxReply(t *testing.T) {
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		piece, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": strings.Repeat("x", 4096)}}}})
		for r.Context().Err() == nil {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", piece); err != nil {
				return
			}
		}
	}))
	defer agentSrv.Close()
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "openai", agentURL: agentSrv.URL + "/v1", model: "test-model",
		maxReply: "64KiB", getenv: func(string) string { return "" }}
	res, stderr := askThroughServe(t, o)
	e, _ := res["error"].(map[string]any)
	if res["ok"] != false || e["code"] != frame.CodeParseFailed || !strings.Contains(fmt.Sprint(e["message"]), "64 KiB") {
		t.Fatalf("app-response = %v, want PARSE_FAILED naming 64 KiB", res)
	}
	logLine(t, stderr, agent.ErrReplyTooLarge.Error())
}
