package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ncruces/go-sqlite3"

	"github.com/snuggen/snuggen/frame"
)

// stallProxy is a TCP proxy in front of PostgreSQL for one replica. Once
// stalled it passes nothing more either way, on the connections it has and
// on new ones: the replica's queries hang, as for an owner paused or cut
// off from PostgreSQL, while everything else of it (the object store, its
// internal listener) goes on.
type stallProxy struct {
	ln     net.Listener
	target string
	done   chan struct{} // closed by close
	once   sync.Once
	mu     sync.Mutex
	hold   chan struct{} // while stalled: closed by resume; nil otherwise
	conns  []net.Conn
	wg     sync.WaitGroup
}

// startStallProxy starts a proxy to the PostgreSQL of pgURL and returns it
// and the URL through it. The caller closes it (t.Cleanup after the
// replica using it, so that it closes before the replica does).
func startStallProxy(t testing.TB, pgURL string) (*stallProxy, string) {
	t.Helper()
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: u.Host, done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *stallProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

// pipe copies from to to until either closes, passing nothing once stalled.
func (p *stallProxy) pipe(from, to net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			hold := p.hold
			p.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-p.done:
					return
				}
			}
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				to.Close()
			}
			return
		}
	}
}

func (p *stallProxy) stall() {
	p.mu.Lock()
	p.hold = make(chan struct{})
	p.mu.Unlock()
}

// resume passes what was held and everything after it again.
func (p *stallProxy) resume() {
	p.mu.Lock()
	close(p.hold)
	p.hold = nil
	p.mu.Unlock()
}

// close ends every connection: the replica's queries fail at once.
func (p *stallProxy) close() {
	p.once.Do(func() {
		close(p.done)
		p.ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
}

// countRows counts the rows of a query's first column in the SQLite file at
// path, read beside the replica that has it open.
func countRows(t testing.TB, path, sql string) int64 {
	t.Helper()
	c, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, _, err := c.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Step() {
		t.Fatalf("%s: no row: %v", sql, st.Err())
	}
	return st.ColumnInt64(0)
}

// stallingPair opens two replicas of one cluster (lease TTL 2 s) under
// prefix: b, whose PostgreSQL connections go through proxy, which the
// test can stall, and a.
func stallingPair(t *testing.T, prefix string) (a, b *Cluster, proxy *stallProxy, s3 *s3Server) {
	t.Helper()
	pg := freshDB(t)
	s3 = startS3(t)
	proxy, viaProxy := startStallProxy(t, pg)
	const ttl = 2 * time.Second
	b = openCluster(t, viaProxy, s3.url(prefix), ttl)
	t.Cleanup(proxy.close)
	a = openCluster(t, pg, s3.url(prefix), ttl)
	return a, b, proxy, s3
}

// A write forwarded to an owner that commits and uploads it and then stalls
// (cut off from PostgreSQL before its fence) is sent again, once the lease
// expired, to the next owner, whose copy restored from the stalled owner's
// upload holds the write already: it is applied once, and the resend is
// answered with its result. The rows have no unique key, so a second run
// would show.
func TestResentWriteRunsOnce(t *testing.T) {
	a, b, proxy, _ := stallingPair(t, "once")
	install(t, a, b)
	mustExec(t, b, "alice", "notes", "CREATE TABLE log(v TEXT)")
	mustExec(t, a, "alice", "notes", "INSERT INTO log VALUES ('before')") // forwarded to b
	k := dbKey{"alice", "notes"}
	b.mu.Lock()
	path := b.owned[k].path
	b.mu.Unlock()

	proxy.stall()
	r := execSQL(t, a, "alice", "notes", "INSERT INTO log VALUES ('resent') RETURNING rowid")
	if !r.OK {
		t.Fatalf("the resent write: %s: %s", r.Error.Code, r.Error.Message)
	}
	if n := countRows(t, path, "SELECT count(*) FROM log WHERE v = 'resent'"); n != 1 {
		t.Fatalf("the stalled owner's copy holds the write %d times, want 1 (the test needs it to have run there)", n)
	}
	a.mu.Lock()
	_, aOwns := a.owned[k]
	a.mu.Unlock()
	if !aOwns {
		t.Fatal("a did not take the database over")
	}
	if got := one(mustExec(t, a, "alice", "notes", "SELECT count(*) FROM log WHERE v = 'resent'")); got != "1" {
		t.Fatalf("the write is there %s times after the resend, want 1", got)
	}
	if got := one(mustExec(t, a, "alice", "notes", "SELECT max(rowid) FROM log")); got != one(r.Result) {
		t.Errorf("the resend answered rowid %s, the write has %s", one(r.Result), got)
	}
}

// leaseState is what the test reads of a lease row: the owner, the expiry
// and PostgreSQL's clock, all in one statement.
type leaseState struct {
	owner   string
	epoch   int64
	expires time.Time
	now     time.Time
	prefix  string
}

func readLeaseRow(t testing.TB, conn *pgx.Conn, user, app string) leaseState {
	t.Helper()
	var l leaseState
	if err := conn.QueryRow(context.Background(), `SELECT l.owner, l.epoch, coalesce(s.expires_at, l.expires_at), now(), l.prefix
		FROM snug_leases l LEFT JOIN snug_sessions s ON s.id = l.session WHERE l.usr = $1 AND l.app = $2`,
		user, app).Scan(&l.owner, &l.epoch, &l.expires, &l.now, &l.prefix); err != nil {
		t.Fatal(err)
	}
	return l
}

// An owner that stalls is taken over as soon as its lease expires, not at
// the forwarder's next periodic look (every half TTL before): the owner is
// cut off from PostgreSQL just before it would renew, which put the expiry
// a third of the TTL before such a look; the takeover must come within a
// sixth of the TTL after the expiry, on PostgreSQL's clock. Then the
// stalled owner gets PostgreSQL back, learns it lost the lease and deletes
// its old prefix, late uploads included.
func TestStalledOwnerFailsOverAtExpiry(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	proxy, viaProxy := startStallProxy(t, pg)
	const ttl = 3 * time.Second
	b := openCluster(t, viaProxy, s3.url("stall"), ttl)
	t.Cleanup(proxy.close)
	a := openCluster(t, pg, s3.url("stall"), ttl)
	install(t, a, b)
	mustExec(t, b, "alice", "notes", "CREATE TABLE log(v TEXT)")
	mustExec(t, a, "alice", "notes", "INSERT INTO log VALUES ('before')")
	conn, err := pgx.Connect(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	first := readLeaseRow(t, conn, "alice", "notes")
	if first.owner != b.ID() {
		t.Fatalf("owner %s, want b", first.owner)
	}
	// Stall b just before its next renewal (every third of the TTL).
	for readLeaseRow(t, conn, "alice", "notes").expires.Equal(first.expires) {
		time.Sleep(5 * time.Millisecond) // watching for b's renewal, not timing an assertion
	}
	time.Sleep(ttl/3 - 200*time.Millisecond) // the phase of the stall, not an assertion
	proxy.stall()
	answered := make(chan bool, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r := a.DBRequest(ctx, call("alice", "notes"), &frame.DBRequest{RequestID: "r", InstanceID: "i", Op: frame.OpExec, SQL: str("INSERT INTO log VALUES ('during')")})
		answered <- r.OK
	}()
	last := readLeaseRow(t, conn, "alice", "notes")
	for deadline := time.Now().Add(time.Minute); ; {
		l := readLeaseRow(t, conn, "alice", "notes")
		if l.owner != b.ID() {
			lag := l.now.Sub(last.expires)
			t.Logf("taken over %s after the stalled owner's lease expired (TTL %s)", lag, ttl)
			if lag > ttl/6 {
				t.Errorf("taken over %s after the lease expired, want at most %s", lag, ttl/6)
			}
			break
		}
		last = l
		if time.Now().After(deadline) {
			t.Fatal("nobody took the database over")
		}
		time.Sleep(5 * time.Millisecond) // polling the row: the lag is read on PostgreSQL's clock
	}
	if !<-answered {
		t.Fatal("the write during the stall was not acknowledged")
	}

	// b's late upload under its fenced prefix, after a dropped that prefix.
	old := first.prefix + "/"
	waitFor(t, "a to delete the old prefix", func() bool { return len(s3.keys(t, old)) == 0 })
	if _, err := b.local.Exec(context.Background(), dbKey{"alice", "notes"}.storeKey(), "INSERT INTO log VALUES ('late')", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b's late upload", func() bool { return len(s3.keys(t, old)) > 0 })
	proxy.resume()
	waitFor(t, "b to delete its fenced prefix", func() bool { return len(s3.keys(t, old)) == 0 })
	if got := one(mustExec(t, a, "alice", "notes", "SELECT count(*) FROM log")); got != "2" {
		t.Fatalf("%s rows after the takeover, want 2 (the late write was never acknowledged)", got)
	}
}

// waitFor waits up to a minute for cond.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition
	}
}

// Forwards go to the owner a replica read the lease of without reading it
// again for each request; the owner answers only at the epoch the
// forwarder read, so when the lease moves on (an import starts a new
// epoch, the owner gives the database up) the next forward reads it again.
func TestForwardsUseTheCachedLease(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	a := openCluster(t, pg, s3.url("route"), 2*time.Second)
	b := openCluster(t, pg, s3.url("route"), 2*time.Second)
	install(t, a, b)
	mustExec(t, b, "alice", "notes", "CREATE TABLE log(v TEXT)")
	before := a.leaseReads.Load()
	const n = 20
	for range n {
		mustExec(t, a, "alice", "notes", "INSERT INTO log VALUES ('x')")
	}
	reads := a.leaseReads.Load() - before
	t.Logf("%d forwarded writes read the lease %d times", n, reads)
	if reads > n/4 {
		t.Errorf("%d forwarded writes read the lease %d times, want at most %d (once per lease's life)", n, reads, n/4)
	}
	// b starts a new epoch (an import of its own export).
	exp := b.DBRequest(context.Background(), call("alice", "notes"), &frame.DBRequest{RequestID: "e", InstanceID: "i", Op: frame.OpExport})
	if !exp.OK {
		t.Fatalf("export: %+v", exp.Error)
	}
	imp := b.DBRequest(context.Background(), call("alice", "notes"), &frame.DBRequest{RequestID: "i", InstanceID: "i", Op: frame.OpImport, Data: exp.Result.Data})
	if !imp.OK {
		t.Fatalf("import: %+v", imp.Error)
	}
	before = a.leaseReads.Load()
	if got := one(mustExec(t, a, "alice", "notes", "SELECT count(*) FROM log")); got != "20" {
		t.Fatalf("%s rows through a after b's import, want 20", got)
	}
	if a.leaseReads.Load() == before {
		t.Error("a forwarded at the old epoch without reading the lease again")
	}
}

// A read answers only once the writes it may have seen are durable: while
// a committed write's upload hangs, a read of its database waits (it would
// otherwise show the app a row that a failover now could take back), and
// both are answered, the read with the row, once the upload ends.
func TestReadWaitsForTheWritesItSaw(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	c := openCluster(t, pg, s3.url("settle"), 10*time.Second)
	mustExec(t, c, "alice", "todo", "CREATE TABLE t(x)")
	release := s3.holdPuts()
	defer release()
	wrote := make(chan *frame.DBResponse, 1)
	go func() { wrote <- execSQL(t, c, "alice", "todo", "INSERT INTO t VALUES (1)") }()
	waitFor(t, "the write's upload to start", func() bool { return s3.heldPuts() > 0 })
	read := make(chan *frame.DBResponse, 1)
	go func() { read <- execSQL(t, c, "alice", "todo", "SELECT count(*) FROM t") }()
	select {
	case r := <-read:
		t.Fatalf("the read answered (%v) while the write it saw was not uploaded", r.Result)
	case r := <-wrote:
		t.Fatalf("the write was acknowledged (%+v) before its upload", r)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	if r := <-wrote; !r.OK {
		t.Fatalf("the write: %+v", r.Error)
	}
	if r := <-read; !r.OK || one(r.Result) != "1" {
		t.Fatalf("the read: %+v %+v, want the row", r.Result, r.Error)
	}
}

// A write's identity is 128 bits, 32 hex digits, and identities made in
// later milliseconds sort after earlier ones (the owner's record keeps
// them on its last pages).
func TestWriteIDsSortByTime(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for range 5 {
		id := newWriteID()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("identity %q is not 32 hex digits", id)
		}
		if seen[id] || id <= prev {
			t.Fatalf("identity %q after %q: want a new, later one", id, prev)
		}
		seen[id], prev = true, id
		time.Sleep(2 * time.Millisecond) // the next millisecond
	}
}

// A round is synced only once every write that joined it finished its
// statement, and a write joins before its statement runs: so a read that
// saw a write's commit (here, one still running its statement when the
// read asks) waits for that write's upload, whichever path each came by.
// After a round failed, a read asks for one more round before it answers:
// what the failed round held is not known to be uploaded.
func TestReadsWaitForWritesStillRunning(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	c := openCluster(t, pg, s3.url("running"), 10*time.Second)
	mustExec(t, c, "alice", "todo", "CREATE TABLE t(x)")
	c.mu.Lock()
	o := c.owned[dbKey{"alice", "todo"}]
	c.mu.Unlock()
	r := o.begin() // a write whose statement runs
	o.wake()
	read := make(chan error, 1)
	go func() { read <- o.settled(context.Background()) }()
	select {
	case <-r.done:
		t.Fatal("a round was synced while one of its writes still ran its statement")
	case err := <-read:
		t.Fatalf("a read answered (%v) while a write it may have seen was not uploaded", err)
	case <-time.After(300 * time.Millisecond):
	}
	o.ended(r)
	if err := o.wait(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Fatal(err)
	}

	o.gmu.Lock()
	o.dirty = true // as after a failed round
	o.gmu.Unlock()
	if err := o.settled(context.Background()); err != nil {
		t.Fatal(err)
	}
	o.gmu.Lock()
	dirty := o.dirty
	o.gmu.Unlock()
	if dirty {
		t.Fatal("after a failed round a read answered without a round of its own")
	}
}

// A page's writes forwarded one after the other without waiting for their
// answers run at the owner side by side (the forwarder hands its lane on
// once the owner says a write ran), and keep their order when the owner
// stalls before any is durable: every one is sent again, in order, to the
// next owner (here the forwarder, which takes the lease over), and each is
// applied once. Without the chain (order.go) the resends race.
func TestForwardedWritesKeepTheirOrderAcrossFailover(t *testing.T) {
	a, b, proxy, s3 := stallingPair(t, "order")
	install(t, b)
	h := notesHost(t, a)
	mustExec(t, b, "alice", "notes", "CREATE TABLE log(n INTEGER)")
	path := ownedDB(t, b, "alice", "notes").path
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	page := openNotesPage(ctx, t, h, "alice")
	// Nothing b uploads from now on reaches the object store.
	release := s3.holdPutsUnder("/notes/e1/")
	t.Cleanup(release)
	const n = 12
	answers := make([]func() (frame.Frame, error), n)
	for i := range answers {
		answers[i] = page.start(ctx, t, fmt.Sprintf("INSERT INTO log VALUES (%d)", i+1))
	}
	waitFor(t, "every write to run at b while its uploads hang", func() bool {
		return countRows(t, path, "SELECT count(*) FROM log") == n
	})
	proxy.stall()
	for i, answer := range answers {
		f, err := answer()
		if err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
		if r, ok := f.(*frame.DBResponse); !ok || !r.OK {
			t.Fatalf("write %d: %+v", i+1, f)
		}
	}
	ownedDB(t, a, "alice", "notes") // a took it over
	want := make([]string, n)
	for i := range want {
		want[i] = strconv.Itoa(i + 1)
	}
	if got := one(mustExec(t, a, "alice", "notes", "SELECT group_concat(n, ',') FROM (SELECT n FROM log ORDER BY rowid)")); got != strings.Join(want, ",") {
		t.Errorf("the writes are there as %s, want %s (each once, in the order sent)", got, strings.Join(want, ","))
	}
}
