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

func (d *appDB) kvGet(key string) (json.RawMessage, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	if v, ok := d.kvCache[key]; ok {
		return json.RawMessage(v), true, nil
	}
	d.trusted = true
	defer func() { d.trusted = false }()
	st := d.kvGetSt
	defer st.Reset()
	if err := st.BindText(1, key); err != nil {
		return nil, false, err
	}
	if !st.Step() {
		return nil, false, st.Err()
	}
	raw := st.ColumnRawText(0)
	if jsonStringLen(key)+len(raw) > resultBudget() {
		return nil, false, &Error{Code: frame.CodeDBResultTooLarge, Message: fmt.Sprintf(
			"the value under this key is %s: it cannot fit the db frame", bytesize.Text(int64(len(raw))))}
	}
	if !json.Valid(raw) {
		return nil, false, fmt.Errorf("kv value under %q is not JSON", key)
	}
	d.cacheKV(key, raw)
	return json.RawMessage(bytes.Clone(raw)), true, nil
}

// The bounds of an open database's kv cache (appDB.kvCache): a value
// larger than kvCacheValueMax is not kept, and the cache is emptied
// before it would hold more than kvCacheMax bytes.
const (
	kvCacheValueMax = 4 << 10
	kvCacheMax      = 64 << 10
)

// cacheKV keeps the value kvGet just read under key (see kvCache).
func (d *appDB) cacheKV(key string, raw []byte) {
	if len(raw) > kvCacheValueMax || d.s.opts.LockingMode != LockingExclusive {
		return
	}
	n := len(key) + len(raw)
	if d.kvCacheBytes+n > kvCacheMax {
		d.dropKVCache()
	}
	if d.kvCache == nil {
		d.kvCache = make(map[string]string)
	}
	d.kvCache[key] = string(raw)
	d.kvCacheBytes += n
}

// uncacheKV drops key's cached value (it is being written).
func (d *appDB) uncacheKV(key string) {
	if v, ok := d.kvCache[key]; ok {
		delete(d.kvCache, key)
		d.kvCacheBytes -= len(key) + len(v)
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
