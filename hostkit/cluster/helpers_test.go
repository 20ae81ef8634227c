package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/internal/pgtest"
	"github.com/snuggen/snuggen/internal/relayclient"
)

// The S3 server of these tests is github.com/johannesboyne/gofakes3 in
// memory, in the test process, on loopback: the real S3 wire protocol (the
// replicas speak it with the AWS SDK through Litestream), without a second
// program to install.

// s3Server is one in-process S3 server and its bucket.
type s3Server struct {
	srv     *httptest.Server
	backend *s3mem.Backend

	mu       sync.Mutex
	seen     []string      // every request: method, path and query, unescaped
	hold     chan struct{} // while not nil, PUTs wait until it is closed
	holdPart string        // those whose path holds it
	held     int           // PUTs waiting on hold now
}

// holdPuts makes every PUT wait until the function it returns is first
// called.
func (s *s3Server) holdPuts() (release func()) { return s.holdPutsUnder("") }

// holdPutsUnder holds, as holdPuts does, the PUTs whose path holds part.
func (s *s3Server) holdPutsUnder(part string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hold := make(chan struct{})
	s.hold, s.holdPart = hold, part
	return sync.OnceFunc(func() {
		s.mu.Lock()
		s.hold = nil
		s.mu.Unlock()
		close(hold)
	})
}

// heldPuts is how many PUTs wait on holdPuts now.
func (s *s3Server) heldPuts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// requests counts the requests so far whose path or query holds part.
func (s *s3Server) requests(part string) (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.seen {
		if strings.Contains(r, part) {
			n++
		}
	}
	return n
}

func startS3(t testing.TB) *s3Server {
	t.Helper()
	b := s3mem.New()
	if err := b.CreateBucket("snug"); err != nil {
		t.Fatal(err)
	}
	s := &s3Server{backend: b}
	h := gofakes3.New(b, gofakes3.WithTimeSkewLimit(0)).Server()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, _ := url.QueryUnescape(r.URL.RawQuery)
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path+"?"+q)
		hold := s.hold
		if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, s.holdPart) {
			hold = nil
		}
		if hold != nil {
			s.held++
		}
		s.mu.Unlock()
		if hold != nil {
			<-hold
			s.mu.Lock()
			s.held--
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "snug-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "snug-test-secret")
	// Litestream's S3 client brings its own HTTP client, which the AWS SDK
	// refuses to combine with a CA bundle from the environment.
	t.Setenv("AWS_CA_BUNDLE", "")
	return s
}

// url is the --object-store URL for prefix in the test bucket.
func (s *s3Server) url(prefix string) string {
	return "s3://snug/" + prefix + "?endpoint=" + s.srv.URL + "&region=us-east-1"
}

// keys lists the object keys under prefix.
func (s *s3Server) keys(t testing.TB, prefix string) []string {
	t.Helper()
	p := gofakes3.NewPrefix(&prefix, nil)
	list, err := s.backend.ListBucket("snug", &p, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list.Contents {
		out = append(out, c.Key)
	}
	return out
}

var (
	pgOnce sync.Mutex
	pgURL  string
)

// postgres is one throwaway cluster shared by the package's tests (each
// test uses its own database in it).
func postgres(t testing.TB) string {
	t.Helper()
	pgOnce.Lock()
	defer pgOnce.Unlock()
	if pgURL == "" {
		pgURL = pgtest.Start(sharedT{t}).URL
	}
	return pgURL
}

// sharedT lets the shared server outlive the first test that starts it:
// its cleanup runs at the end of the package (TestMain).
type sharedT struct{ testing.TB }

func (s sharedT) Cleanup(f func()) { sharedCleanups = append(sharedCleanups, f) }

var sharedCleanups []func()

// testSecret is the cluster secret of the tests' replicas.
const testSecret = "snug-test-cluster-secret-0123456789abcdef"

// openCluster opens a replica on pg and obj with a short lease.
func openCluster(t testing.TB, pg, obj string, ttl time.Duration) *Cluster {
	t.Helper()
	return openClusterWith(t, Config{Postgres: pg, ObjectStore: obj, LeaseTTL: ttl, Secrets: []string{testSecret}})
}

// openClusterWith opens a replica configured by cfg (its DataDir and Logf
// filled in).
func openClusterWith(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	cfg.DataDir = t.TempDir()
	cfg.Logf = func(format string, args ...any) { t.Logf(format, args...) }
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// one is the single value of a one-row, one-column result, as text.
func one(r *frame.DBResult) string {
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return fmt.Sprintf("%v", r.Rows)
	}
	return fmt.Sprint(r.Rows[0][0])
}

func call(user, app string) broker.Call { return broker.Call{User: user, App: app, RequestID: "r"} }

func str(s string) *string { return &s }

func execSQL(t testing.TB, c *Cluster, user, app, sql string, params ...any) *frame.DBResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return c.DBRequest(ctx, call(user, app), &frame.DBRequest{RequestID: "r", InstanceID: "i", Op: frame.OpExec, SQL: str(sql), Params: params})
}

func mustExec(t testing.TB, c *Cluster, user, app, sql string, params ...any) *frame.DBResult {
	t.Helper()
	r := execSQL(t, c, user, app, sql, params...)
	if !r.OK {
		t.Fatalf("%s: %s: %s", sql, r.Error.Code, r.Error.Message)
	}
	return r.Result
}

var dbSeq atomic.Int32

// freshDB is a new, empty database on the shared server, for one test.
func freshDB(t testing.TB) string {
	t.Helper()
	base := postgres(t)
	conn, err := pgx.Connect(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	name := fmt.Sprintf("t%d", dbSeq.Add(1))
	if _, err := conn.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(base, "/postgres?", "/"+name+"?", 1)
}

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(sharedCleanups) - 1; i >= 0; i-- {
		sharedCleanups[i]()
	}
	os.Exit(code)
}

// notesHost is a host serving the app "notes" on c (a replica), its user
// from the X-User header, with more options; it serves until the test
// ends.
func notesHost(t testing.TB, c *Cluster, more ...hostkit.Option) *hostkit.Host {
	t.Helper()
	h, err := hostkit.New(append([]hostkit.Option{
		hostkit.WithApps(hostkit.RawApp("notes", []byte(`<!doctype html><title>Notes</title><p>notes</p>`))),
		hostkit.WithCluster(c),
		hostkit.WithAuthenticate(func(r *http.Request) (string, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return u, nil
			}
			return "", errors.New("no session")
		}),
	}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	go h.Serve()
	t.Cleanup(func() { h.Shutdown(context.Background()) })
	return h
}

// notesPage is a page of a host whose slot s1 holds the notes app.
type notesPage struct {
	c    *relayclient.Client
	inst string
}

// openNotesPage opens a page of h for user and mounts the notes app.
func openNotesPage(ctx context.Context, t testing.TB, h *hostkit.Host, user string) notesPage {
	t.Helper()
	c, err := relayclient.Dial(ctx, h.Origin(), http.Header{"X-User": {user}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	inst, err := c.Mount(ctx, "s1", "notes")
	if err != nil {
		t.Fatal(err)
	}
	return notesPage{c, inst}
}

// exec runs sql from the page and returns the answer (one with the error
// when none came).
func (p notesPage) exec(ctx context.Context, sql string) *frame.DBResponse {
	r, err := p.c.DB(ctx, "s1", p.inst, frame.DBRequest{Op: frame.OpExec, SQL: &sql})
	if err != nil {
		return &frame.DBResponse{Error: &frame.Error{Code: "TEST", Message: err.Error()}}
	}
	return r
}

// start sends sql from the page without waiting; answer waits.
func (p notesPage) start(ctx context.Context, t testing.TB, sql string) (answer func() (frame.Frame, error)) {
	t.Helper()
	req := &frame.DBRequest{Op: frame.OpExec, SQL: &sql, InstanceID: p.inst, RequestID: p.c.NextID()}
	answer, err := p.c.Start(ctx, "s1", req, req.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	return answer
}

// twoPages opens a replica configured by cfg with a host, and two pages
// of alice's notes app, the first of which made table t: the replica owns
// the database.
func twoPages(t *testing.T, cfg Config) (ctx context.Context, a, b notesPage, o *owned) {
	t.Helper()
	c := openClusterWith(t, cfg)
	h := notesHost(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	a, b = openNotesPage(ctx, t, h, "alice"), openNotesPage(ctx, t, h, "alice")
	if r := a.exec(ctx, "CREATE TABLE t(x)"); !r.OK {
		t.Fatalf("create: %+v", r.Error)
	}
	return ctx, a, b, ownedDB(t, c, "alice", "notes")
}

// ownedDB is c's owned database of user's app; the test fails when c does
// not own it.
func ownedDB(t testing.TB, c *Cluster, user, app string) *owned {
	t.Helper()
	c.mu.Lock()
	o := c.owned[dbKey{user, app}]
	c.mu.Unlock()
	if o == nil {
		t.Fatalf("the replica does not own %s's database of %q", user, app)
	}
	return o
}
