package cluster

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// stallProxy is a TCP proxy in front of PostgreSQL for one replica. Once
// stalled it passes nothing more either way, on the connections it has and
// on new ones: the replica's queries hang, as for an owner paused or cut
// off from PostgreSQL, while everything else of it (the object store, its
// internal listener) goes on.
type stallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{} // closed by stall
	done    chan struct{} // closed by close
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
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
	p := &stallProxy{ln: ln, target: u.Host, stalled: make(chan struct{}), done: make(chan struct{})}
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
			select {
			case <-p.stalled:
				<-p.done
				return
			default:
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

func (p *stallProxy) stall() { close(p.stalled) }

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

// A write forwarded to an owner that commits and uploads it and then stalls
// (cut off from PostgreSQL before its fence) is sent again, once the lease
// expired, to the next owner, whose copy restored from the stalled owner's
// upload holds the write already: it is applied once, and the resend is
// answered with its result. The rows have no unique key, so a second run
// would show.
func TestResentWriteRunsOnce(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	proxy, viaProxy := startStallProxy(t, pg)
	const ttl = 2 * time.Second
	b := openCluster(t, viaProxy, s3.url("once"), ttl) // the owner that stalls
	t.Cleanup(proxy.close)
	a := openCluster(t, pg, s3.url("once"), ttl)
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
