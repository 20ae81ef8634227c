package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/bytesize"
)

// MaxKeyBytes bounds a kv key in bytes (the frame bounds it in code points).
const MaxKeyBytes = 4 * 512

func checkKey(key string) error {
	if key == "" {
		return sqlErr("the kv key is empty")
	}
	if len(key) > MaxKeyBytes {
		return sqlErr("the kv key is %d bytes long: the limit is %d", len(key), MaxKeyBytes)
	}
	return nil
}

// kvGet reads key's value: shared (see KVValue), from the cache when it
// is there.
func (d *appDB) kvGet(key string) (KVValue, error) {
	if err := checkKey(key); err != nil {
		return KVValue{}, err
	}
	if e, ok := d.kvCache[key]; ok {
		return e.value(), nil
	}
	d.trusted = true
	defer func() { d.trusted = false }()
	st := d.kvGetSt
	defer st.Reset()
	if err := st.BindText(1, key); err != nil {
		return KVValue{}, err
	}
	if !st.Step() {
		return KVValue{}, st.Err()
	}
	raw := st.ColumnRawText(0)
	if jsonStringLen(key)+len(raw) > resultBudget() {
		return KVValue{}, &Error{Code: frame.CodeDBResultTooLarge, Message: fmt.Sprintf(
			"the value under this key is %s: it cannot fit the db frame", bytesize.Text(int64(len(raw))))}
	}
	if !json.Valid(raw) {
		return KVValue{}, fmt.Errorf("kv value under %q is not JSON", key)
	}
	if e, ok := d.cacheKV(key, raw); ok {
		return e.value(), nil
	}
	return KVValue{Raw: json.RawMessage(bytes.Clone(raw)), Found: true}, nil
}

// The bounds of an open database's kv cache (appDB.kvCache): a value
// larger than kvCacheValueMax is not kept, and the cache is emptied
// before it would hold more than kvCacheMax bytes.
const (
	kvCacheValueMax = 4 << 10
	kvCacheMax      = 64 << 10
)

// kvEntry is a cached kv value: bytes every reader shares and nothing
// changes (a write replaces the entry; see KVValue).
type kvEntry struct {
	v []byte
}

// value is e as kvGet hands it out: the cached bytes themselves, no copy.
func (e kvEntry) value() KVValue {
	return KVValue{Raw: e.v, Found: true}
}

// cacheKV keeps the value kvGet just read under key (see kvCache), and
// reports the entry when it did.
func (d *appDB) cacheKV(key string, raw []byte) (kvEntry, bool) {
	if len(raw) > kvCacheValueMax || d.s.opts.LockingMode != LockingExclusive {
		return kvEntry{}, false
	}
	n := len(key) + len(raw)
	if d.kvCacheBytes+n > kvCacheMax {
		d.dropKVCache()
	}
	if d.kvCache == nil {
		d.kvCache = make(map[string]kvEntry)
	}
	e := kvEntry{v: bytes.Clone(raw)}
	d.kvCache[key] = e
	d.kvCacheBytes += n
	return e, true
}

// uncacheKV drops key's cached value (it is being written).
func (d *appDB) uncacheKV(key string) {
	if e, ok := d.kvCache[key]; ok {
		delete(d.kvCache, key)
		d.kvCacheBytes -= len(key) + len(e.v)
	}
}

// dropKVCache empties the kv cache.
func (d *appDB) dropKVCache() {
	d.kvCache, d.kvCacheBytes = nil, 0
}

func (d *appDB) kvSet(key string, value json.RawMessage) error {
	if err := checkKey(key); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, value); err != nil {
		return sqlErr("the kv value is not JSON: %v", err)
	}
	// Whatever the write's outcome, the next read goes to the database.
	d.uncacheKV(key)
	d.trusted = true
	defer func() { d.trusted = false }()
	if buf.String() == "null" {
		return resetExec(d.kvDelSt, key)
	}
	return resetExec(d.kvPutSt, key, buf.String())
}

func resetExec(st interface {
	BindText(int, string) error
	Exec() error
}, args ...string) error {
	for i, a := range args {
		if err := st.BindText(i+1, a); err != nil {
			return err
		}
	}
	return st.Exec()
}
