package broker

import (
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// A statement that only reads is no write; anything that may write is,
// WITH and comments included.
func TestIsDBWrite(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT * FROM t": false, "  select 1": false, "(SELECT 1)": false, "VALUES (1)": false,
		"EXPLAIN QUERY PLAN SELECT 1": false, "PRAGMA table_info(t)": false,
		"INSERT INTO t VALUES (1)": true, "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x": true,
		"/* SELECT */ DELETE FROM t": true, "-- SELECT\nDELETE FROM t": true, "CREATE TABLE t(x)": true, "": true,
	} {
		if got := IsDBWrite(&frame.DBRequest{Op: frame.OpExec, SQL: &sql}); got != want {
			t.Errorf("IsDBWrite(%q) = %v, want %v", sql, got, want)
		}
	}
	for op, want := range map[string]bool{frame.OpKvSet: true, frame.OpImport: true, frame.OpKvGet: false, frame.OpExport: false} {
		if got := IsDBWrite(&frame.DBRequest{Op: op}); got != want {
			t.Errorf("IsDBWrite(op %s) = %v", op, got)
		}
	}
}
