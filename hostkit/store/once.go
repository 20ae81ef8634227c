package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
)

// At-most-once writes (ExecOnce, KVSetOnce). A replicated host may send a
// write again, to the database's next owner, when the first owner stopped
// before it answered; the next owner's copy, restored from the first
// owner's uploads, may hold the write already. So each write sent with an
// identity records it in _snug_once in the write's own transaction (the
// record travels with the write wherever the file goes), and a write whose
// identity is there is not run again: its recorded result is the answer.

// onceTable is the record table exactly as sqlite_schema stores it, and
// onceIndex its index by age, which keeps the pruning from sorting the
// whole record (10,000 rows) every oncePrune writes: without it a write
// with an identity cost 15 times one without (BenchmarkExecOnce).
const (
	onceTable = `CREATE TABLE _snug_once(id TEXT PRIMARY KEY NOT NULL, at INTEGER NOT NULL, result TEXT) WITHOUT ROWID`
	onceIndex = `CREATE INDEX _snug_once_at ON _snug_once(at)`
)

// Bounds of the record. A resend comes within a failover (the lease's TTL
// and a restore: seconds), so ten minutes and ten thousand writes keep
// every identity a resend can carry; a result is kept up to
// MaxOnceResultBytes of JSON (a write without RETURNING takes some 60).
const (
	onceKeep  = 10 * time.Minute
	onceMax   = 10000
	oncePrune = 64 // records between two prunings, per connection
	// MaxOnceIDBytes bounds a write's identity.
	MaxOnceIDBytes = 128
	// MaxOnceResultBytes is the largest result (as JSON) kept for a
	// resend; a larger one is answered by a resend with HOST_ERROR saying
	// the write was applied once and its result not kept.
	MaxOnceResultBytes = 1024
)

// onceStmts are a connection's prepared statements of the record.
type onceStmts struct {
	get, put *sqlite3.Stmt
	n        int // records since the last pruning
}

// ExecOnce is Exec for a write that may be sent more than once under the
// same id (a non-empty identity the sender keeps across resends, at most
// MaxOnceIDBytes): a statement that writes runs at most once per id. The
// first run records id and its result in the same transaction; a later call
// with the same id runs nothing and returns that result, whose row values
// come back as they marshal to JSON (json.Number, string; a BLOB as its
// base64). A statement that only reads runs every time.
func (s *Store) ExecOnce(ctx context.Context, app, id, sql string, params []any) (*ExecResult, error) {
	if err := checkOnceID(id); err != nil {
		return nil, err
	}
	var res *ExecResult
	err := s.do(ctx, app, "exec", true, true, func(d *appDB) (err error) {
		res, err = d.execOnce(sql, params, id)
		return err
	})
	return res, err
}

// KVSetOnce is KVSet applied at most once per id, as ExecOnce.
func (s *Store) KVSetOnce(ctx context.Context, app, id, key string, value json.RawMessage) error {
	if err := checkOnceID(id); err != nil {
		return err
	}
	return s.do(ctx, app, "kvSet", false, true, func(d *appDB) error {
		return d.kvSetOnce(key, value, id)
	})
}

func checkOnceID(id string) error {
	if id == "" || len(id) > MaxOnceIDBytes {
		return fmt.Errorf("store: a write's identity must be 1 to %d bytes, not %d", MaxOnceIDBytes, len(id))
	}
	return nil
}

// prepareOnce makes the record table when it is missing (in a transaction
// of its own, so a write that fails and rolls back leaves it) and prepares
// its statements, once per connection.
func (d *appDB) prepareOnce() error {
	if d.once.get != nil {
		return nil
	}
	d.trusted = true
	defer func() { d.trusted = false }()
	// The index is made on the record of a database from before it too.
	if err := d.conn.Exec(`CREATE TABLE IF NOT EXISTS` + onceTable[len("CREATE TABLE"):] + `;
		CREATE INDEX IF NOT EXISTS` + onceIndex[len("CREATE INDEX"):]); err != nil {
		return err
	}
	get, _, err := d.conn.PrepareFlags(`SELECT result FROM _snug_once WHERE id = ?`, sqlite3.PREPARE_PERSISTENT)
	if err != nil {
		return err
	}
	put, _, err := d.conn.PrepareFlags(`INSERT INTO _snug_once(id, at, result) VALUES (?, ?, ?)`, sqlite3.PREPARE_PERSISTENT)
	if err != nil {
		get.Close()
		return err
	}
	d.once.get, d.once.put = get, put
	return nil
}

// closeOnce finalizes the record's statements (closeConn).
func (d *appDB) closeOnce() {
	for _, st := range []**sqlite3.Stmt{&d.once.get, &d.once.put} {
		if *st != nil {
			_ = noPanic((*st).Close)
			*st = nil
		}
	}
	d.once.n = 0
}

// onceLookup reads id's record inside the write transaction: found, and
// the result recorded (nil when it was too large to keep).
func (d *appDB) onceLookup(id string) (result []byte, found bool, err error) {
	d.trusted = true
	defer func() { d.trusted = false }()
	st := d.once.get
	defer st.Reset()
	if err := st.BindText(1, id); err != nil {
		return nil, false, err
	}
	if !st.Step() {
		return nil, false, st.Err()
	}
	if st.ColumnType(0) == sqlite3.NULL {
		return nil, true, nil
	}
	return []byte(st.ColumnText(0)), true, nil
}

// onceRecord records id with result (JSON, or nil) inside the write
// transaction, and every oncePrune records drops what is past the bounds.
func (d *appDB) onceRecord(id string, result []byte) error {
	d.trusted = true
	defer func() { d.trusted = false }()
	st := d.once.put
	defer st.Reset()
	if err := st.BindText(1, id); err != nil {
		return err
	}
	if err := st.BindInt64(2, time.Now().UnixMilli()); err != nil {
		return err
	}
	var err error
	if result == nil {
		err = st.BindNull(3)
	} else {
		err = st.BindText(3, string(result))
	}
	if err != nil {
		return err
	}
	if err := st.Exec(); err != nil {
		return err
	}
	d.once.n++
	if d.once.n < oncePrune {
		return nil
	}
	d.once.n = 0
	return d.conn.Exec(fmt.Sprintf(`DELETE FROM _snug_once WHERE at < %d;
		DELETE FROM _snug_once WHERE id IN (SELECT id FROM _snug_once ORDER BY at DESC LIMIT -1 OFFSET %d)`,
		time.Now().Add(-onceKeep).UnixMilli(), d.s.onceMax))
}

// errResultNotKept answers a resend whose first run's result was too large
// to keep.
var errResultNotKept = &Error{Code: frame.CodeHostError, Message: fmt.Sprintf(
	"this write was sent again and had been applied once already; its result (over %d bytes) was not kept, so it cannot be shown", MaxOnceResultBytes)}

// execOnce is exec recording id (see ExecOnce).
func (d *appDB) execOnce(sql string, params []any, id string) (*ExecResult, error) {
	if err := d.prepareOnce(); err != nil {
		return nil, err
	}
	var replay *ExecResult
	var done bool
	before := func() error {
		raw, found, err := d.onceLookup(id)
		if err != nil || !found {
			return err
		}
		done = true
		if raw == nil {
			return errResultNotKept
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		replay = &ExecResult{}
		return dec.Decode(replay)
	}
	after := func(res *ExecResult) error {
		raw, err := json.Marshal(res)
		if err != nil {
			return err
		}
		if len(raw) > MaxOnceResultBytes {
			raw = nil
		}
		return d.onceRecord(id, raw)
	}
	res, err := d.execWith(sql, params, &onceHooks{before: before, after: after, done: &done})
	if done {
		return replay, err
	}
	return res, err
}

// onceHooks are the record's part of a write transaction (execWith): before
// runs first inside it and sets *done when the write ran already (nothing
// more runs; the transaction ends empty); after runs once the statement
// succeeded, before the COMMIT.
type onceHooks struct {
	before func() error
	after  func(*ExecResult) error
	done   *bool
}

// kvSetOnce is kvSet recording id in the same transaction.
func (d *appDB) kvSetOnce(key string, value json.RawMessage, id string) (err error) {
	if err := d.prepareOnce(); err != nil {
		return err
	}
	if err := d.trustedExec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			err = d.trustedExec("COMMIT")
		}
		if err != nil && !d.conn.GetAutocommit() {
			d.conn.SetInterrupt(context.Background())
			_ = d.trustedExec("ROLLBACK")
		}
	}()
	_, found, err := d.onceLookup(id)
	if err != nil || found {
		return err
	}
	if err := d.kvSet(key, value); err != nil {
		return err
	}
	return d.onceRecord(id, nil)
}
