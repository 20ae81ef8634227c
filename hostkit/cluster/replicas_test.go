package cluster

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ncruces/go-sqlite3"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/proxyauth"
	"github.com/snuggen/snuggen/internal/relayclient"
)

// The replicated-mode test with every part real: a throwaway PostgreSQL,
// an S3 server on loopback, and three `snuggen serve --postgres …
// --object-store …` processes built from this tree. A load generator
// writes through any replica as pages do (the relay WebSocket, db-request
// frames), following the cluster's forwards, and records every
// acknowledgement; the owner of one database is killed (kill -9), the owner
// of another is stopped past its lease (SIGSTOP) and resumed, a database is
// imported while the load goes on, and two users write to the same app.
// After the load the stopped owner's successor is killed too, so the
// database is restored again after the fenced owner's late uploads. Every
// acknowledged write must be there afterwards, read through other
// replicas. bench/replicas runs it longer and prints the figures.

// userHeader is how the replicas are told the user (as an authenticating
// proxy in front of them would).
const userHeader = "X-Snug-User"

// proxySecret is the secret the proxy proves itself with (sent in
// proxyauth.SecretHeader beside userHeader).
const proxySecret = "snug-test-proxy-secret-0123456789abcdef"

// secretFile writes secret to a file of mode 600 in a new directory and
// returns its path.
func secretFile(t testing.TB, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const logApp = `<!doctype html>
<html><head><meta charset="utf-8"><title>Write log</title></head>
<body>
<h1>Write log</h1>
<form id="add"><input name="text" required><button>Add</button></form>
<ul id="log"></ul>
<script>
const list = document.getElementById("log");
async function show() {
  const r = await snug.db.exec("SELECT id FROM log ORDER BY at DESC LIMIT 20");
  list.innerHTML = r.rows.map(([id]) => "<li>" + id + "</li>").join("");
}
document.getElementById("add").addEventListener("submit", async (e) => {
  e.preventDefault();
  await snug.db.exec("CREATE TABLE IF NOT EXISTS log(id TEXT, at INTEGER)");
  await snug.db.exec("INSERT INTO log(id, at) VALUES (?, ?)", [e.target.text.value, Date.now()]);
  show();
});
</script>
</body></html>
`

// replica is one `snuggen serve` process.
type replica struct {
	name   string
	cmd    *exec.Cmd
	id     string // its id in the lease rows
	origin string // http://127.0.0.1:port
	done   chan struct{}
	out    *lockedBuf
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// snuggenBinary builds cmd/snuggen with the cluster tag, once per test run.
func snuggenBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "snuggen-cluster-")
		if err != nil {
			binErr = err
			return
		}
		sharedCleanups = append(sharedCleanups, func() { os.RemoveAll(dir) })
		binPath = filepath.Join(dir, "snuggen")
		cmd := exec.Command("go", "build", "-tags", "cluster", "-o", binPath, "github.com/snuggen/snuggen/cmd/snuggen")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build -tags cluster: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// startReplica starts one replica and waits for its "app" and "replica"
// lines (printed once it listens and its start-up checks passed).
func startReplica(t testing.TB, name, bin, pg, obj, data, app string, ttl time.Duration, flags ...string) *replica {
	t.Helper()
	args := append([]string{"--data", data,
		"--postgres", pg, "--object-store", obj, "--lease-ttl", ttl.String(),
		"--cluster-secret-file", secretFile(t, testSecret)}, flags...)
	return startServe(t, name, bin, true, append(args, app)...)
}

// startServe starts `snuggen serve` with args (after its address and user
// header) and waits until it serves: its "app" lines, and with cluster its
// "replica" line (printed after them, once its start-up checks passed).
func startServe(t testing.TB, name, bin string, cluster bool, args ...string) *replica {
	t.Helper()
	args = append([]string{"serve", "--addr", "127.0.0.1:0",
		"--user-header", userHeader, "--proxy-secret-file", secretFile(t, proxySecret)}, args...)
	cmd := exec.Command(bin, args...)
	env := []string{"AWS_ACCESS_KEY_ID=snug-test", "AWS_SECRET_ACCESS_KEY=snug-test-secret"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, cmd: cmd, done: make(chan struct{}), out: &lockedBuf{}}
	cmd.Stderr = r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 3 && f[0] == "app":
				if u, err := url.Parse(f[2]); err == nil {
					r.origin = u.Scheme + "://" + u.Host
				}
				if !cluster {
					close(ready)
				}
			case len(f) == 3 && f[0] == "replica":
				r.id = f[1]
				close(ready) // printed after the app lines
			}
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
	}()
	t.Cleanup(func() { r.kill() })
	select {
	case <-ready:
	case <-r.done:
		t.Fatalf("replica %s exited before serving:\n%s", name, r.out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("replica %s did not start:\n%s", name, r.out.String())
	}
	if r.origin == "" {
		t.Fatalf("replica %s printed no app line:\n%s", name, r.out.String())
	}
	return r
}

func (r *replica) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGCONT)
	_ = r.cmd.Process.Kill()
	<-r.done
}

// ack is one acknowledged write.
type ack struct {
	id string
	at time.Time
}

// loadGen writes through the replicas as pages would, one writer per
// (user, connection). The rows have no unique key, so a write the host ran
// twice shows twice; a write not acknowledged is not sent again (its id
// may be there once or not at all), the writer goes on with the next id
// through another replica.
type loadGen struct {
	mu       sync.Mutex
	replicas []*replica
	acks     map[string][]ack // by user
	errs     map[string]int   // failed attempts, by user
	unsure   map[string]bool  // ids sent and not acknowledged
}

func (g *loadGen) origins() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, len(g.replicas))
	for i, r := range g.replicas {
		out[i] = r.origin
	}
	return out
}

func (g *loadGen) record(user, id string) {
	g.mu.Lock()
	g.acks[user] = append(g.acks[user], ack{id, time.Now()})
	g.mu.Unlock()
}

func (g *loadGen) failed(user, id string) {
	g.mu.Lock()
	g.errs[user]++
	if id != "" {
		g.unsure[id] = true
	}
	g.mu.Unlock()
}

// page is one writer's connection: a page of one replica with the app
// mounted.
type page struct {
	c    *relayclient.Client
	inst string
}

func openPage(ctx context.Context, origin, user string) (*page, error) {
	c, err := relayclient.Dial(ctx, origin, http.Header{userHeader: {user}, proxyauth.SecretHeader: {proxySecret}})
	if err != nil {
		return nil, err
	}
	inst, err := c.Mount(ctx, "s1", "log")
	if err != nil {
		c.Close()
		return nil, err
	}
	return &page{c, inst}, nil
}

func (p *page) exec(ctx context.Context, sql string, params ...any) (*frame.DBResponse, error) {
	return p.c.DB(ctx, "s1", p.inst, frame.DBRequest{Op: frame.OpExec, SQL: &sql, Params: params})
}

// writer writes user's rows until ctx ends, through replica start first.
func (g *loadGen) writer(ctx context.Context, user string, w, start int) {
	var p *page
	defer func() {
		if p != nil {
			p.c.Close()
		}
	}()
	next := start
	for n := 0; ; {
		if ctx.Err() != nil {
			return
		}
		if p == nil {
			origins := g.origins()
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			var err error
			p, err = openPage(dctx, origins[next%len(origins)], user)
			cancel()
			next++
			if err != nil {
				p = nil
				g.failed(user, "")
				continue
			}
			if r, err := p.exec(ctx, "CREATE TABLE IF NOT EXISTS log(id TEXT, at INTEGER)"); err != nil || !r.OK {
				p.c.Close()
				p = nil
				g.failed(user, "")
				continue
			}
		}
		id := fmt.Sprintf("%s-w%d-%d", user, w, n)
		wctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		r, err := p.exec(wctx, "INSERT INTO log(id, at) VALUES (?, ?)", id, time.Now().UnixMilli())
		cancel()
		n++
		if err != nil || !r.OK {
			// No answer, or not acknowledged: the write may or may not
			// be there; the next goes through the next replica.
			g.failed(user, id)
			p.c.Close()
			p = nil
			continue
		}
		g.record(user, id)
	}
}

// burst is how many writes a burster sends before it awaits them.
const burst = 8

// burster writes user's rows as a model-written app's loop does: bursts of
// writes sent without awaiting them, from one page at a time, each page's
// ids numbered in the order sent ("<user>-b<page>-<n>"). After a write
// that is not acknowledged it goes on with a new page on the next replica.
// A page's writes must land in the order sent (checkBurstOrder), whatever
// fails over meanwhile.
func (g *loadGen) burster(ctx context.Context, user string, start int) {
	for pageN := 0; ctx.Err() == nil; pageN++ {
		origins := g.origins()
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		p, err := openPage(dctx, origins[(start+pageN)%len(origins)], user)
		cancel()
		if err != nil {
			g.failed(user, "")
			continue
		}
		if r, err := p.exec(ctx, "CREATE TABLE IF NOT EXISTS log(id TEXT, at INTEGER)"); err != nil || !r.OK {
			p.c.Close()
			g.failed(user, "")
			continue
		}
		for n := 0; g.sendBurst(ctx, p, user, pageN, n); n += burst {
		}
		p.c.Close()
	}
}

// sendBurst sends one burst from p and reports whether every write of it
// was acknowledged.
func (g *loadGen) sendBurst(ctx context.Context, p *page, user string, pageN, n int) bool {
	wctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	type sent struct {
		id     string
		answer func() (frame.Frame, error)
	}
	var out []sent
	for i := range burst {
		id := fmt.Sprintf("%s-b%d-%d", user, pageN, n+i)
		sql := "INSERT INTO log(id, at) VALUES (?, ?)"
		req := &frame.DBRequest{Op: frame.OpExec, SQL: &sql, Params: []any{id, time.Now().UnixMilli()}, InstanceID: p.inst, RequestID: p.c.NextID()}
		answer, err := p.c.Start(wctx, "s1", req, req.RequestID)
		if err != nil {
			g.failed(user, id)
			break
		}
		out = append(out, sent{id, answer})
	}
	all := len(out) == burst
	for _, w := range out {
		f, err := w.answer()
		if r, ok := f.(*frame.DBResponse); err == nil && ok && r.OK {
			g.record(user, w.id)
		} else {
			g.failed(user, w.id)
			all = false
		}
	}
	return all && ctx.Err() == nil
}

// checkBurstOrder reads user's rows through origin in the order they were
// applied and fails t if any page's burst writes landed out of the order
// it sent them.
func checkBurstOrder(t testing.TB, origin, user string) (writes int) {
	t.Helper()
	rows := readLog(t, origin, user, "SELECT id FROM log WHERE id LIKE ? ORDER BY rowid", user+"-b%")
	last := map[int]int{} // by page, the last n seen
	for _, row := range rows {
		var pageN, n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(fmt.Sprint(row[0]), user+"-b"), "%d-%d", &pageN, &n); err != nil {
			t.Fatalf("%s's row %v: %v", user, row[0], err)
		}
		if prev, ok := last[pageN]; ok && n <= prev {
			t.Errorf("%s's page %d: write %d applied after write %d, which it sent later", user, pageN, n, prev)
		}
		last[pageN] = n
	}
	return len(rows)
}

// owner is the replica id that holds user's lease of app, and its epoch.
func owner(t testing.TB, pg, user, app string) (string, int64, string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var o, prefix string
	var e int64
	if err := conn.QueryRow(context.Background(), `SELECT owner, epoch, prefix FROM snug_leases WHERE usr = $1 AND app = $2`, user, app).Scan(&o, &e, &prefix); err != nil {
		t.Fatal(err)
	}
	return o, e, prefix
}

// waitAcks waits until user has an acknowledgement later than after.
func (g *loadGen) waitAcks(t testing.TB, user string, after time.Time, limit time.Duration) time.Duration {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		a := g.acks[user]
		ok := len(a) > 0 && a[len(a)-1].at.After(after)
		g.mu.Unlock()
		if ok {
			return time.Since(after)
		}
		time.Sleep(20 * time.Millisecond) // polling the generator's record, not timing anything
	}
	t.Fatalf("no write of %s acknowledged for %s after %s", user, limit, after.Format(time.StampMilli))
	return 0
}

// readLog runs a query of user's log through a new page of the replica at
// origin and returns its rows.
func readLog(t testing.TB, origin, user, sql string, params ...any) [][]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := openPage(ctx, origin, user)
	if err != nil {
		t.Fatal(err)
	}
	defer p.c.Close()
	r, err := p.exec(ctx, sql, params...)
	if err != nil || !r.OK {
		t.Fatalf("read %s's log through %s: %v %+v", user, origin, err, r)
	}
	return r.Result.Rows
}

// readIDs reads every id of user's log through the replica at origin, and
// how many times each is there.
func readIDs(t testing.TB, origin, user string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, row := range readLog(t, origin, user, "SELECT id, count(*) FROM log GROUP BY id") {
		n, err := strconv.Atoi(fmt.Sprint(row[1]))
		if err != nil {
			t.Fatalf("read %s's log: count %v: %v", user, row[1], err)
		}
		out[fmt.Sprint(row[0])] = n
	}
	return out
}

func sleepCtx(d time.Duration) { time.Sleep(d) } // the load's phases, not an assertion

// gapAround is the failover time of an event at: the longest gap between
// consecutive acknowledgements that opens within a second before the event
// or in the ten seconds after it (an answer already on its way when the
// owner died may land just after it).
func gapAround(acks []ack, at time.Time) time.Duration {
	a := append([]ack(nil), acks...)
	sort.Slice(a, func(i, j int) bool { return a[i].at.Before(a[j].at) })
	var m time.Duration
	for i := 1; i < len(a); i++ {
		if open := a[i-1].at; open.After(at.Add(-time.Second)) && open.Before(at.Add(10*time.Second)) {
			m = max(m, a[i].at.Sub(open))
		}
	}
	return m
}

// gaps returns the longest gap between consecutive acknowledgements.
func gaps(a []ack) time.Duration {
	sort.Slice(a, func(i, j int) bool { return a[i].at.Before(a[j].at) })
	var m time.Duration
	for i := 1; i < len(a); i++ {
		m = max(m, a[i].at.Sub(a[i-1].at))
	}
	return m
}

// replicasLoad skips a test of replica processes under load (what says
// what it runs) with -short and off Linux, and returns how long its steady
// phase lasts: 3 s, or SNUG_REPLICAS_LOAD (bench/replicas: longer).
func replicasLoad(t *testing.T, what string) time.Duration {
	t.Helper()
	if testing.Short() {
		t.Skip(what + ": not with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("Litestream beside ncruces/go-sqlite3 is measured on Linux")
	}
	if v, err := time.ParseDuration(os.Getenv("SNUG_REPLICAS_LOAD")); err == nil && v > 0 {
		return v
	}
	return 3 * time.Second
}

func TestReplicasFailover(t *testing.T) {
	load := replicasLoad(t, "three replica processes and a failover")
	const ttl = 2 * time.Second
	pg, s3 := freshDB(t), startS3(t)
	bin := snuggenBinary(t)
	dir := t.TempDir()
	appFile := filepath.Join(dir, "log.html")
	if err := os.WriteFile(appFile, []byte(logApp), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := s3.url("replicas")
	// r1 stages its uploads beside the databases (--cluster-staging
	// beside), the others in memory: both lose nothing acknowledged.
	stage := memDir(t)
	start := func(name string) *replica {
		flags := []string{"--cluster-staging", stage}
		if name == "r1" {
			flags = []string{"--cluster-staging", StageBeside}
		}
		return startReplica(t, name, bin, pg, obj, filepath.Join(dir, "data"), appFile, ttl, flags...)
	}
	g := &loadGen{acks: map[string][]ack{}, errs: map[string]int{}, unsure: map[string]bool{}}
	var all []*replica // every process started, for the logs of a failure
	start0 := start
	start = func(name string) *replica {
		r := start0(name)
		all = append(all, r)
		return r
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range all {
				t.Logf("%s stderr:\n%s", r.name, r.out.String())
			}
		}
	})
	g.replicas = []*replica{start("r1"), start("r2"), start("r3")}
	byID := func(id string) (int, *replica) {
		g.mu.Lock()
		defer g.mu.Unlock()
		for i, r := range g.replicas {
			if r.id == id {
				return i, r
			}
		}
		t.Fatalf("no replica has id %q", id)
		return 0, nil
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	users := []string{"alice", "bob"} // two users of the same app
	const writers = 4
	began := time.Now()
	for _, u := range users {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() { defer wg.Done(); g.writer(ctx, u, w, w) }()
		}
		// And one app that does not await its writes, whose bursts
		// replicas that do not own the database forward.
		wg.Add(1)
		go func() { defer wg.Done(); g.burster(ctx, u, 1) }()
	}
	defer func() { stop(); wg.Wait() }()
	g.waitAcks(t, "alice", began, 30*time.Second)
	g.waitAcks(t, "bob", began, 30*time.Second)
	sleepCtx(load)

	// 1. kill -9 the owner of alice's database, mid-write.
	aliceOwner, aliceEpoch, _ := owner(t, pg, "alice", "log")
	i, victim := byID(aliceOwner)
	killedAt := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	g.waitAcks(t, "alice", killedAt.Add(ttl), 30*time.Second)
	t.Logf("kill -9 of %s (alice's owner, epoch %d)", victim.name, aliceEpoch)
	fresh := start(victim.name + "'")
	g.mu.Lock()
	g.replicas[i] = fresh
	g.mu.Unlock()
	sleepCtx(load / 2)

	// 2. SIGSTOP the owner of bob's database past its lease, then resume it.
	bobOwner, bobEpoch, bobPrefix := owner(t, pg, "bob", "log")
	_, paused := byID(bobOwner)
	stoppedAt := time.Now()
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	g.waitAcks(t, "bob", stoppedAt.Add(ttl), 30*time.Second)
	newOwner, newEpoch, newPrefix := owner(t, pg, "bob", "log")
	if newOwner == bobOwner || newEpoch <= bobEpoch || newPrefix == bobPrefix {
		t.Fatalf("after the owner was stopped past its lease: owner %s epoch %d prefix %s (was %s, %d, %s)", newOwner, newEpoch, newPrefix, bobOwner, bobEpoch, bobPrefix)
	}
	before := len(s3.keys(t, bobPrefix+"/"))
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGSTOP of %s (bob's owner, epoch %d): epoch %d on another replica", paused.name, bobEpoch, newEpoch)
	sleepCtx(load / 2)

	// 3. An import of alice's database while the load goes on.
	ictx, icancel := context.WithTimeout(context.Background(), time.Minute)
	p, err := openPage(ictx, g.origins()[0], "alice")
	if err != nil {
		t.Fatal(err)
	}
	exportedAt := time.Now()
	exp, err := p.c.DB(ictx, "s1", p.inst, frame.DBRequest{Op: frame.OpExport})
	if err != nil || !exp.OK {
		t.Fatalf("export: %v %+v", err, exp)
	}
	// Mark the copy, as a user's edited backup would be.
	marked := importMarked(t, *exp.Result.Data)
	imp, err := p.c.DB(ictx, "s1", p.inst, frame.DBRequest{Op: frame.OpImport, Data: &marked})
	importedAt := time.Now()
	p.c.Close()
	icancel()
	if err != nil || !imp.OK {
		t.Fatalf("import: %v %+v", err, imp)
	}
	_, importEpoch, _ := owner(t, pg, "alice", "log")
	t.Logf("import of alice's database during the load: epoch %d", importEpoch)
	sleepCtx(load / 2)

	stop()
	wg.Wait()
	elapsed := time.Since(began)                           // the load's duration, for the rates
	lateUploads := len(s3.keys(t, bobPrefix+"/")) - before // the stopped owner deletes them once it learns it lost the lease

	// 4. The stopped owner's late uploads change nothing: kill -9 bob's
	// owner now, after them, so the next owner restores bob's database from
	// the object store again; it must restore from the published prefix
	// (never the fenced one) and hold every acknowledged write.
	lastOwner, lastEpoch, _ := owner(t, pg, "bob", "log")
	_, last := byID(lastOwner)
	if err := last.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-last.done
	var readers []*replica // the replicas left
	for _, r := range g.replicas {
		if r != last {
			readers = append(readers, r)
		}
	}
	readIDs(t, readers[0].origin, "bob") // waits out the lease, then restores
	restoredOwner, restoredEpoch, restoredPrefix := owner(t, pg, "bob", "log")
	if restoredOwner == lastOwner || restoredEpoch <= lastEpoch || restoredPrefix == bobPrefix {
		t.Fatalf("after kill -9 of bob's last owner: owner %s epoch %d prefix %s (was %s, %d; the fenced prefix %s)", restoredOwner, restoredEpoch, restoredPrefix, lastOwner, lastEpoch, bobPrefix)
	}
	t.Logf("kill -9 of %s (bob's owner, epoch %d) after the late uploads: epoch %d restored from the object store", last.name, lastEpoch, restoredEpoch)

	// Every acknowledged write is there, read through every replica left
	// (all of them serve through forwards), and each page's bursts in the
	// order sent.
	bursts := map[string]int{}
	for _, u := range users {
		for _, r := range readers {
			ids := readIDs(t, r.origin, u)
			missing := 0
			for _, a := range g.acks[u] {
				if u == "alice" && a.at.After(exportedAt) && a.at.Before(importedAt) {
					continue // acknowledged while the import replaced the file: either way
				}
				if ids[a.id] == 0 {
					missing++
					if missing < 5 {
						t.Errorf("%s's acknowledged write %s (at %s) is missing through %s", u, a.id, a.at.Format(time.StampMilli), r.name)
					}
				}
			}
			doubled := 0
			for id, n := range ids {
				if !strings.HasPrefix(id, u+"-") && id != "imported" {
					t.Errorf("%s's database holds %q: another user's write", u, id)
				}
				if n > 1 {
					doubled++
					if doubled < 5 {
						t.Errorf("%s's write %s is there %d times through %s (sent once; acknowledged: %v)", u, id, n, r.name, !g.unsure[id])
					}
				}
			}
			if doubled > 0 {
				t.Errorf("%d writes of %s applied more than once through %s", doubled, u, r.name)
			}
			if u == "alice" && ids["imported"] == 0 {
				t.Errorf("the import's marker is missing through %s", r.name)
			}
			if missing > 0 {
				t.Errorf("%d of %d acknowledged writes of %s missing through %s", missing, len(g.acks[u]), u, r.name)
			}
		}
		bursts[u] = checkBurstOrder(t, readers[0].origin, u)
	}

	// The figures.
	failover := gapAround(g.acks["alice"], killedAt)
	resumed := gapAround(g.acks["bob"], stoppedAt)
	total := 0
	for _, u := range users {
		n := len(g.acks[u])
		total += n
		t.Logf("FIGURE %s: %d writes acknowledged, %.0f/s, longest gap between acknowledgements %s, %d attempts not acknowledged (not sent again), none applied twice; %d rows from writes sent %d at a time without awaiting, each page's in the order sent",
			u, n, float64(n)/elapsed.Seconds(), gaps(g.acks[u]).Round(time.Millisecond), g.errs[u], bursts[u], burst)
	}
	_, aliceFinal, _ := owner(t, pg, "alice", "log")
	_, bobFinal, _ := owner(t, pg, "bob", "log")
	t.Logf("FIGURE total: %d writes acknowledged in %s, %.0f/s, 0 lost; failover (longest gap between acknowledgements) after kill -9 of the owner: %s, after SIGSTOP of the owner: %s (lease %s); objects under the stopped owner's old prefix since it resumed: %+d (late uploads, never read, less what it deleted); final epochs alice %d, bob %d",
		total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), failover.Round(time.Millisecond), resumed.Round(time.Millisecond), ttl, lateUploads, aliceFinal, bobFinal)
}

// importMarked returns data (a base64 SQLite file) with one more row, the
// marker "imported".
func importMarked(t testing.TB, data string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sqliteExec(path, "INSERT INTO log(id, at) VALUES ('imported', 0)"); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func sqliteExec(path, sql string) error {
	c, err := sqlite3.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(c.Exec(sql), c.Close())
}

// `snuggen serve --postgres … --object-store …` checks both services before
// it serves anything: a service it cannot use ends the process with exit
// status 1 and a message naming the service and the fix (never the
// password), and no app is ever listed as served.
func TestServeChecksBeforeServing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds snuggen with the cluster tag: not with -short")
	}
	pg, s3 := freshDB(t), startS3(t)
	bin := snuggenBinary(t)
	dir := t.TempDir()
	appFile := filepath.Join(dir, "log.html")
	if err := os.WriteFile(appFile, []byte(logApp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pg, obj string
		mention       []string
	}{
		{"postgres down", "postgres://snug:hunter2@127.0.0.1:1/none?connect_timeout=2", s3.url("x"), []string{"PostgreSQL at 127.0.0.1:1/none does not answer", "is it running"}},
		{"missing bucket", pg, strings.Replace(s3.url("x"), "s3://snug/", "s3://nosuch/", 1), []string{"object store s3://nosuch/x", "check the bucket exists"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"),
			"--postgres", tc.pg, "--object-store", tc.obj, "--cluster-secret-file", secretFile(t, testSecret), appFile)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=snug-test", "AWS_SECRET_ACCESS_KEY=snug-test-secret", "AWS_CA_BUNDLE=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("%s: %v, want exit status 1\nstderr: %s", tc.name, err, stderr.String())
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(stderr.String(), m) {
				t.Errorf("%s: stderr %q does not say %q", tc.name, stderr.String(), m)
			}
		}
		if strings.Contains(stderr.String()+stdout.String(), "hunter2") {
			t.Errorf("%s: the output shows the password:\n%s%s", tc.name, stdout.String(), stderr.String())
		}
		if strings.Contains(stdout.String(), "app ") {
			t.Errorf("%s: an app was served before the check failed:\n%s", tc.name, stdout.String())
		}
		t.Logf("%s: %s", tc.name, strings.TrimSpace(stderr.String()))
	}
}
