package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/bytesize"
)

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

func tempName(path, suffix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return path + suffix + hex.EncodeToString(b[:])
}

// removeFiles removes path and the journal files SQLite may leave beside it.
func removeFiles(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *appDB) export() (data []byte, err error) {
	tmp := tempName(d.path, exportSuffix)
	defer func() {
		if rerr := removeFiles(tmp); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	// VACUUM INTO writes a compacted copy from one read transaction: a
	// consistent snapshot. It attaches the target, so it needs one slot.
	d.trusted = true
	c := d.conn
	c.Limit(sqlite3.LIMIT_ATTACHED, 1)
	defer func() {
		c.Limit(sqlite3.LIMIT_ATTACHED, 0)
		d.trusted = false
	}()
	st, _, err := c.Prepare("VACUUM INTO ?")
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := st.BindText(1, tmp); err != nil {
		return nil, err
	}
	if err := st.Exec(); err != nil {
		return nil, err
	}
	if err := dropReplicatorTables(tmp); err != nil {
		return nil, err
	}
	info, err := os.Stat(tmp)
	if err != nil {
		return nil, err
	}
	if info.Size() > int64(frame.MaxArtifactBytes) {
		return nil, &Error{Code: frame.CodeDBResultTooLarge, Message: fmt.Sprintf(
			"the compacted database is %s: an export holds at most %s",
			bytesize.Text(info.Size()), bytesize.Text(int64(frame.MaxArtifactBytes)))}
	}
	return os.ReadFile(tmp)
}

// dropReplicatorTables removes a replicator's tables and the record of
// writes applied once from an export's copy (they are the host's, not the
// app's, and an import refuses them).
func dropReplicatorTables(path string) error {
	c, err := sqlite3.Open(path)
	if err != nil {
		return err
	}
	st, _, err := c.Prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND (name LIKE '\_litestream\_%' ESCAPE '\' OR name = '_snug_once')`)
	if err != nil {
		return errors.Join(err, c.Close())
	}
	var names []string
	for st.Step() {
		names = append(names, st.ColumnText(0))
	}
	if err := errors.Join(st.Err(), st.Close()); err != nil {
		return errors.Join(err, c.Close())
	}
	if len(names) > 0 {
		q := ""
		for _, n := range names {
			q += `DROP TABLE "` + strings.ReplaceAll(n, `"`, `""`) + `";`
		}
		if err := c.Exec(q + "VACUUM;"); err != nil {
			return errors.Join(err, c.Close())
		}
	}
	return c.Close()
}

func importErr(format string, a ...any) *Error {
	return &Error{Code: frame.CodeDBImportInvalid, Message: fmt.Sprintf(format, a...)}
}

// checkHeader checks what the first 100 bytes of an SQLite file promise
// against the file as given.
func checkHeader(data []byte) error {
	if len(data) < 100 || string(data[:16]) != sqliteMagic {
		return importErr("the data is not an SQLite database file (no \"SQLite format 3\" header)")
	}
	pageSize := int(binary.BigEndian.Uint16(data[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return importErr("the header's page size %d is not a power of two from 512 to 65536", pageSize)
	}
	if len(data)%pageSize != 0 {
		return importErr("the file is %d bytes, not a whole number of %d-byte pages (truncated?)", len(data), pageSize)
	}
	if w, r := data[18], data[19]; w < 1 || w > 2 || r < 1 || r > 2 {
		return importErr("the header's file format versions (%d, %d) are not 1 (rollback) or 2 (WAL)", w, r)
	}
	if data[21] != 64 || data[22] != 32 || data[23] != 32 {
		return importErr("the header's payload fractions are not 64, 32, 32")
	}
	pages := len(data) / pageSize
	// The in-header page count is valid when its version-valid-for number
	// matches the change counter (SQLite 3.7.0 and later).
	counted := int(binary.BigEndian.Uint32(data[28:32]))
	if counted != 0 && binary.BigEndian.Uint32(data[92:96]) == binary.BigEndian.Uint32(data[24:28]) && counted != pages {
		return importErr("the header counts %d pages and the file holds %d (truncated or padded)", counted, pages)
	}
	if enc := binary.BigEndian.Uint32(data[56:60]); enc > 3 {
		return importErr("the header's text encoding %d is not 1, 2 or 3", enc)
	}
	return nil
}

func (d *appDB) importFile(data []byte) (err error) {
	if len(data) > frame.MaxArtifactBytes {
		return importErr("the file is %s: an import holds at most %s",
			bytesize.Text(int64(len(data))), bytesize.Text(int64(frame.MaxArtifactBytes)))
	}
	if int64(len(data)) > d.s.opts.QuotaBytes {
		return &Error{Code: frame.CodeDBQuotaExceeded, Message: fmt.Sprintf(
			"the file is %s: the database quota is %s", bytesize.Text(int64(len(data))), bytesize.Text(d.s.opts.QuotaBytes))}
	}
	if err := checkHeader(data); err != nil {
		return err
	}

	tmp := tempName(d.path, importSuffix)
	renamed := false
	defer func() {
		if renamed {
			return
		}
		if rerr := removeFiles(tmp); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if err := d.validate(tmp); err != nil {
		return err
	}
	// The checks left tmp in WAL mode with its WAL checkpointed and
	// removed: make that durable too.
	if err := syncFile(tmp); err != nil {
		return err
	}

	// Swap. Closing the old connection checkpoints and removes its WAL,
	// which must not survive to be replayed onto the new file.
	if err := d.closeConn(); err != nil {
		return err
	}
	if hasJournal(d.path) {
		// Not open in this process (the host restarted) and left by a
		// crash with committed pages still in its WAL: opening and closing
		// it moves them into the file and removes the WAL.
		err := noPanic(d.openConn)
		err = errors.Join(err, d.closeConn())
		if hasJournal(d.path) {
			// The old database does not open (damaged) and is being
			// replaced by a checked file: its journal goes first, so that
			// no crash can leave it beside the new file.
			for _, p := range []string{d.path + "-wal", d.path + "-journal"} {
				if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
					return errors.Join(err, rerr)
				}
			}
			if serr := syncDir(filepath.Dir(d.path)); serr != nil {
				return errors.Join(err, serr)
			}
		}
	}
	if err := os.Rename(tmp, d.path); err != nil {
		return err
	}
	renamed = true
	for _, p := range []string{d.path + "-wal", d.path + "-shm", d.path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := syncDir(filepath.Dir(d.path)); err != nil {
		return err
	}
	return d.openConn()
}

// hasJournal reports whether a WAL or rollback journal with content lies
// beside path: pages SQLite would apply to whatever file has that name.
func hasJournal(path string) bool {
	for _, p := range []string{path + "-wal", path + "-journal"} {
		if info, err := os.Stat(p); err == nil && info.Size() > 0 {
			return true
		}
	}
	return false
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// validate opens the candidate file with the same hardening as an app
// database and runs the integrity check and the schema policy. The checks
// evaluate what the file holds (its schema, CHECK constraints, expression
// indexes) under the call's interrupt, which the overrides of funcs.go
// (openHardened installs them here too) look at inside their calls: a file
// whose checks pass the time limit is refused.
func (d *appDB) validate(path string) error {
	err := noPanic(func() (err error) {
		c, err := openHardened(path, d.s.opts)
		if err != nil {
			return err
		}
		defer func() {
			c.SetInterrupt(context.Background())
			err = errors.Join(err, noPanic(c.Close))
		}()
		c.SetInterrupt(d.opCtx)
		if err := checkContent(c); err != nil {
			return err
		}
		return d.finish(c)
	})
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	var dp *driverPanic
	if errors.As(err, &dp) {
		return importErr("the file is damaged: its schema cannot be read")
	}
	var code sqlite3.ErrorCode
	if !errors.As(err, &code) {
		return err
	}
	switch code {
	case sqlite3.INTERRUPT, sqlite3.NOMEM, sqlite3.IOERR, sqlite3.CANTOPEN, sqlite3.FULL, sqlite3.BUSY:
		return err // the time limit, the memory cap, or the host's own trouble
	}
	return importErr("the file is damaged or not a database: %s", strings.TrimPrefix(err.Error(), "sqlite3: "))
}

// finish makes in the candidate file what opening it as the app's database
// would add (the kv table), so that a file the quota leaves no room for is
// refused here, before it replaces anything, and never once it has.
func (d *appDB) finish(c *sqlite3.Conn) error {
	err := createKVTable(c)
	if errors.Is(err, sqlite3.FULL) {
		return &Error{Code: frame.CodeDBQuotaExceeded, Message: fmt.Sprintf(
			"the file fills the database quota of %s and leaves no room for the host's kv table (one more page): "+
				"import a file at least one page smaller; the old database is untouched", bytesize.Text(d.s.opts.QuotaBytes))}
	}
	return err
}

func checkContent(c *sqlite3.Conn) error {
	// The modules first: the integrity check runs each virtual table's
	// own check, and a module the host refuses runs nothing.
	fts, err := checkModules(c)
	if err != nil {
		return err
	}
	st, _, err := c.Prepare("PRAGMA integrity_check(5)")
	if err != nil {
		return err
	}
	var problems []string
	for st.Step() {
		if s := st.ColumnText(0); s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := errors.Join(st.Err(), st.Close()); err != nil {
		return err
	}
	if len(problems) > 0 {
		return importErr("the integrity check failed: %s", strings.ReplaceAll(strings.Join(problems, "; "), "\n", "; "))
	}

	st, _, err = c.Prepare("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema")
	if err != nil {
		return err
	}
	hasKV := false
	var bad error
	for st.Step() && bad == nil {
		typ, name, tbl, sql := st.ColumnText(0), st.ColumnText(1), st.ColumnText(2), st.ColumnText(3)
		switch {
		case typ == "table" && name == "_snug_kv" && sql == kvTable:
			hasKV = true
		case isReserved(name) || isReserved(tbl):
			bad = importErr("the schema holds %s %q: names starting with %s are reserved by the host", typ, name, reservedPrefix)
		case isReplicator(name) || isReplicator(tbl):
			bad = importErr("the schema holds %s %q: names starting with %s are reserved by the host", typ, name, replicatorPrefix)
		case strings.Contains(strings.ToLower(sql), replicatorPrefix):
			bad = importErr("%s %q refers to the reserved %s names", typ, name, replicatorPrefix)
		case strings.Contains(strings.ToLower(sql), reservedPrefix):
			// A trigger, view or foreign key reaching into the kv table.
			bad = importErr("%s %q refers to the reserved %s names", typ, name, reservedPrefix)
		}
	}
	if err := errors.Join(st.Err(), st.Close()); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	if err := checkShadowIndexes(c, importErr); err != nil {
		return err
	}
	if hasKV {
		if err := checkKVValues(c); err != nil {
			return err
		}
	}
	return checkFTS5(c, fts)
}

// checkKVValues refuses a kv table holding a key or a value the app could
// not have written: each is checked as kvSet checks what the app writes
// (keyProblem, valueProblem), so an import cannot bring the app a value
// such as 1e999 (Infinity) or a lone surrogate that no write would store.
func checkKVValues(c *sqlite3.Conn) error {
	st, _, err := c.Prepare("SELECT key, value FROM _snug_kv")
	if err != nil {
		return err
	}
	var bad *Error
	for bad == nil && st.Step() {
		if st.ColumnType(0) != sqlite3.TEXT || st.ColumnType(1) != sqlite3.TEXT {
			bad = importErr("the kv table holds a key or a value that is not text")
			break
		}
		key, value := st.ColumnText(0), st.ColumnText(1)
		if why := keyProblem(key); why != "" {
			bad = importErr("the kv table holds a key the app could not write: %s", why)
		} else if why := valueProblem(value); why != "" {
			bad = importErr("the kv table's value under %q cannot be read back as stored: %s", clip(key, 64), why)
		}
	}
	if err := errors.Join(st.Err(), st.Close()); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	return nil
}
