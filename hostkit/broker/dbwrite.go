package broker

import (
	"strings"
	"unicode"

	"github.com/snuggen/snuggen/frame"
)

// IsDBWrite reports a db-request that may change the database: kvSet,
// import, and an exec unless its statement plainly only reads (SELECT,
// VALUES, EXPLAIN, PRAGMA: the store allows read-only PRAGMAs only);
// anything else, WITH included, is taken as a write. Shutdown lets a
// running write finish; a replicated host waits for a write's upload.
func IsDBWrite(r *frame.DBRequest) bool {
	switch r.Op {
	case frame.OpKvSet, frame.OpImport:
		return true
	case frame.OpExec:
		if r.SQL == nil {
			return true
		}
		sql := strings.TrimLeft(*r.SQL, " \t\r\n(")
		end := strings.IndexFunc(sql, func(c rune) bool { return !unicode.IsLetter(c) })
		if end < 0 {
			end = len(sql)
		}
		switch strings.ToUpper(sql[:end]) {
		case "SELECT", "VALUES", "EXPLAIN", "PRAGMA":
			return false
		}
		return true
	}
	return false
}
