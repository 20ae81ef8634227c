package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
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

// userMark starts a key made by UserKey; the store's callers pass app keys
// that never hold a NUL byte (hostkit.ValidKey).
const userMark = "\x00"

// UserKey is the store key of user's database of the installed app app:
// the app key itself for the empty user (one local user, as hostkit has
// without an authenticator), otherwise a key the store keeps under a
// directory of the user's own, named by a SHA-256 of the user (see Path),
// so no user name reaches the file system and no two users share a file.
func UserKey(user, app string) string {
	if user == "" {
		return app
	}
	return userMark + user + userMark + app
}

// splitUserKey undoes UserKey; ok is false for a plain app key.
func splitUserKey(key string) (user, app string, ok bool) {
	rest, found := strings.CutPrefix(key, userMark)
	if !found {
		return "", key, false
	}
	i := strings.LastIndex(rest, userMark)
	if i < 0 {
		return "", "", true
	}
	return rest[:i], rest[i+len(userMark):], true
}

// relPath is the path of key's database file relative to the store's
// directory: FileName(key), or for a UserKey "u-<sha256 of the user>/"
// followed by FileName(app).
func relPath(key string) (string, error) {
	user, app, namespaced := splitUserKey(key)
	if !namespaced {
		return FileName(key)
	}
	if user == "" {
		return "", errors.New("a user key with an empty user")
	}
	name, err := FileName(app)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(user))
	return "u-" + hex.EncodeToString(sum[:]) + "/" + name, nil
}
