package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/hostkit/store"
)

// dbModel is the sequential model of one app database as the order
// property sees it: its kv pairs (JSON text) and the counter row of table c.
type dbModel struct {
	kv map[string]string
	n  int
}

func (m dbModel) clone() dbModel { return dbModel{kv: maps.Clone(m.kv), n: m.n} }

// orderOp is one request of a burst and the answer the model gives it at
// its place in the order sent.
type orderOp struct {
	slot, rid, frame string
	check            func(f frameView) error
}

// TestDBRequestsTakeEffectInOrder is the order property of the db pair:
// bursts of kvSet, kvGet, exec and import from several instances of one
// app, sent without waiting in a random interleaving, are answered exactly
// as a sequential model applying them in the order sent answers them (every
// read sees every write sent before it, an acknowledged write is never
// overtaken by an earlier request), and after the bursts the database
// holds the model's state, also once the store is closed and opened again
// (a host restart). All instances share one page's connection, so the
// order sent is the order the host received them.
func TestDBRequestsTakeEffectInOrder(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := newHost(t, broker.Options{DB: broker.Store(st), MaxInFlight: 1024}, relay.Options{NoInspect: true})
	p := h.page(t)
	slots := []string{"s0", "s1", "s2", "s3"}
	inst := map[string]string{}
	for _, s := range slots {
		inst[s] = p.start(s, "a")
	}
	ask := func(slot, rid, f string) frameView {
		t.Helper()
		p.frame(slot, f)
		a := p.terminal(slot, rid)
		if a.OK == nil || !*a.OK {
			t.Fatalf("%s: %+v", rid, a.Error)
		}
		return a
	}
	ask("s0", "setup1", execFrame(inst["s0"], "setup1", "CREATE TABLE c(id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"))
	ask("s0", "setup2", execFrame(inst["s0"], "setup2", "INSERT INTO c VALUES (1, 0)"))
	model := dbModel{kv: map[string]string{}}
	// Two snapshots an import can bring back, with the model state of each.
	var snaps []string
	var snapModels []dbModel
	for i, key := range []string{"k0", "k1"} {
		v := fmt.Sprintf(`[%d,"snap"]`, i)
		ask("s0", "snapset"+key, dbKV(inst["s0"], "snapset"+key, "kvSet", key, v))
		model.kv[key] = v
		a := ask("s0", "snap"+key, fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"snap%s","instanceId":%q,"op":"export"}`, key, inst["s0"]))
		var res struct{ Data string }
		if err := json.Unmarshal(a.Result, &res); err != nil {
			t.Fatal(err)
		}
		snaps, snapModels = append(snaps, res.Data), append(snapModels, model.clone())
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	g := opGen{slots: slots, inst: inst, prefix: "k", row: 1, snaps: snaps, snapModels: snapModels}
	seq := 0
	for round := range 6 {
		if err := burst(t, p, g, rng, &model, &seq, 120); err != nil {
			t.Fatalf("round %d, %v (seed %d)", round, err, seed)
		}
	}

	// The database holds the model's state, read through the host and
	// again after a restart of the store.
	for key, want := range model.kv {
		a := ask("s1", "final"+key, dbKV(inst["s1"], "final"+key, "kvGet", key, ""))
		if err := kvGetIs(want, true)(a); err != nil {
			t.Errorf("after the bursts, %s: %v", key, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ctx := context.Background()
	for _, key := range []string{"k0", "k1", "k2"} {
		v, found, err := st2.KVGet(ctx, "a", key)
		want, wantFound := model.kv[key]
		if err != nil || found != wantFound || (found && string(v) != want) {
			t.Errorf("after a restart, %s = %s (found %v, %v), want %s (found %v)", key, v, found, err, want, wantFound)
		}
	}
	res, err := st2.Exec(ctx, "a", "SELECT n FROM c WHERE id = 1", nil)
	if err != nil || len(res.Rows) != 1 || fmt.Sprint(res.Rows[0][0]) != fmt.Sprint(model.n) {
		t.Errorf("after a restart, c.n = %v (%v), want %d", res, err, model.n)
	}
}

// opGen draws the requests of a burst: from one of slots, on keys
// prefix0..prefix2 and the counter row row of table c, and, when snaps is
// not empty, an import of one of them now and then.
type opGen struct {
	slots      []string
	inst       map[string]string
	prefix     string
	row        int
	snaps      []string
	snapModels []dbModel
}

// next draws one request, applies it to m and returns it with the answer
// m gives it.
func (g opGen) next(rng *rand.Rand, m *dbModel, seq int) orderOp {
	slot := g.slots[rng.IntN(len(g.slots))]
	id := g.inst[slot]
	rid := fmt.Sprintf("o%d", seq)
	key := fmt.Sprintf("%s%d", g.prefix, rng.IntN(3))
	op := orderOp{slot: slot, rid: rid}
	switch r := rng.IntN(100); {
	case r < 40: // the whole list again, as autosave writes it
		v := fmt.Sprintf(`{"links":[%d,%d],"seq":%d}`, seq-1, seq, seq)
		if rng.IntN(10) == 0 {
			v = "null"
			delete(m.kv, key)
		} else {
			m.kv[key] = v
		}
		op.frame, op.check = dbKV(id, rid, "kvSet", key, v), okAnswer
	case r < 75:
		want, found := m.kv[key]
		op.frame, op.check = dbKV(id, rid, "kvGet", key, ""), kvGetIs(want, found)
	case r < 88:
		m.n++
		op.frame, op.check = execFrame(id, rid, fmt.Sprintf("UPDATE c SET n = n + 1 WHERE id = %d RETURNING n", g.row)), rowsAre(m.n)
	case r < 97 || len(g.snaps) == 0:
		op.frame, op.check = execFrame(id, rid, fmt.Sprintf("SELECT n FROM c WHERE id = %d", g.row)), rowsAre(m.n)
	default:
		i := rng.IntN(len(g.snaps))
		*m = g.snapModels[i].clone()
		op.frame = fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"import","data":%q}`, rid, id, g.snaps[i])
		op.check = okAnswer
	}
	return op
}

// burst sends n requests of g without waiting, then checks every answer
// against the model.
func burst(t *testing.T, p *page, g opGen, rng *rand.Rand, m *dbModel, seq *int, n int) error {
	ops := make([]orderOp, n)
	for i := range ops {
		*seq++
		ops[i] = g.next(rng, m, *seq)
	}
	for _, op := range ops {
		p.frame(op.slot, op.frame)
	}
	for _, op := range ops {
		if err := op.check(p.terminal(op.slot, op.rid)); err != nil {
			return fmt.Errorf("%s on %s: %w", op.rid, op.slot, err)
		}
	}
	return nil
}

func execFrame(inst, rid, sql string) string {
	return fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"exec","sql":%q,"params":[]}`, rid, inst, sql)
}

func okAnswer(f frameView) error {
	if f.OK == nil || !*f.OK {
		return fmt.Errorf("answered %+v, want ok", f.Error)
	}
	return nil
}

// kvGetIs checks a kvGet's answer against the model's value.
func kvGetIs(want string, found bool) func(frameView) error {
	return func(f frameView) error {
		if err := okAnswer(f); err != nil {
			return err
		}
		var res struct {
			Found bool
			Value json.RawMessage
		}
		if err := json.Unmarshal(f.Result, &res); err != nil {
			return err
		}
		if res.Found != found || (found && string(res.Value) != want) {
			return fmt.Errorf("kvGet read %s (found %v), want %s (found %v): a read missed a write sent before it", res.Value, res.Found, want, found)
		}
		return nil
	}
}

// rowsAre checks an exec's answer: one row holding n.
func rowsAre(n int) func(frameView) error {
	return func(f frameView) error {
		if err := okAnswer(f); err != nil {
			return err
		}
		var res struct{ Rows [][]json.Number }
		if err := json.Unmarshal(f.Result, &res); err != nil {
			return err
		}
		if len(res.Rows) != 1 || len(res.Rows[0]) != 1 || res.Rows[0][0].String() != fmt.Sprint(n) {
			return fmt.Errorf("exec read %v, want [[%d]]: the statements did not run in the order sent", res.Rows, n)
		}
		return nil
	}
}

// TestDBRequestsInOrderFromConcurrentPages: instances of one app on pages
// of their own (each its own connection, read by its own goroutine) send
// their bursts at the same time, each on its own keys and counter row of
// the shared database: each instance's answers are its own sequential
// model's, whatever the other pages do meanwhile.
func TestDBRequestsInOrderFromConcurrentPages(t *testing.T) {
	h := newHost(t, broker.Options{DB: broker.Store(openStore(t)), MaxInFlight: 1024}, relay.Options{NoInspect: true})
	const pages = 3
	ps := make([]*page, pages)
	gens := make([]opGen, pages)
	for i := range ps {
		ps[i] = h.page(t)
		gens[i] = opGen{slots: []string{"s"}, inst: map[string]string{"s": ps[i].start("s", "a")}, prefix: fmt.Sprintf("p%d.", i), row: i + 1}
	}
	for i, sql := range []string{"CREATE TABLE c(id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", "INSERT INTO c VALUES (1, 0), (2, 0), (3, 0)"} {
		rid := fmt.Sprint("setup", i)
		ps[0].frame("s", execFrame(gens[0].inst["s"], rid, sql))
		if err := okAnswer(ps[0].terminal("s", rid)); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	errs := make(chan error, pages)
	for i := range ps {
		go func() {
			err := fmt.Errorf("page %d stopped waiting (see the log)", i)
			defer func() { errs <- err }() // also when a wait fails the test
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			m, seq := dbModel{kv: map[string]string{}}, 0
			for round := range 4 {
				if berr := burst(t, ps[i], gens[i], rng, &m, &seq, 100); berr != nil {
					err = fmt.Errorf("page %d, round %d: %w", i, round, berr)
					return
				}
			}
			err = nil
		}()
	}
	for range pages {
		if err := <-errs; err != nil {
			t.Errorf("%v (seed %d)", err, seed)
		}
	}
}
