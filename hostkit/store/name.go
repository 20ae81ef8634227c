package store

import (
	"errors"
	"fmt"
)

// MaxAppKeyBytes is the longest app key the store takes; escaped it stays
// well inside a 255-byte file name together with the store's suffixes.
const MaxAppKeyBytes = 64

// dbSuffix ends every database file name; importSuffix and exportSuffix
// mark temporary files (followed by a random part), removed by Open.
const (
	dbSuffix     = ".db"
	importSuffix = ".import-"
	exportSuffix = ".export-"
)

// FileName is the name of app's database file inside the data directory.
// Bytes a-z, 0-9, '_' and '-' stand for themselves; every other byte,
// capitals and '.' included, becomes '.' and two lowercase hex digits. The
// mapping is one-to-one, the result holds no path separator and never starts
// with "..", so no key can reach outside the directory, and keys that differ
// only in case stay apart on a case-insensitive file system.
func FileName(app string) (string, error) {
	if app == "" {
		return "", errors.New("empty app key")
	}
	if len(app) > MaxAppKeyBytes {
		return "", fmt.Errorf("app key of %d bytes: the limit is %d", len(app), MaxAppKeyBytes)
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(app)*3+len(dbSuffix))
	for i := 0; i < len(app); i++ {
		c := app[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
			b = append(b, c)
		default:
			b = append(b, '.', hex[c>>4], hex[c&15])
		}
	}
	return string(append(b, dbSuffix...)), nil
}
