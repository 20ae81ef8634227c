package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/bytesize"
	"github.com/snuggen/snuggen/internal/jsonscan"
)

// MaxKeyBytes bounds a kv key in bytes (the frame bounds it in code points).
const MaxKeyBytes = 4 * 512

func checkKey(key string) error {
	if why := keyProblem(key); why != "" {
		return sqlErr("%s", why)
	}
	return nil
}

// keyProblem says what is wrong with a kv key, "" when nothing is: the
// frame's bounds (1–512 code points) and the store's byte bound, checked of
// keys the app writes and of keys an imported file brings alike.
func keyProblem(key string) string {
	switch {
	case key == "":
		return "the kv key is empty"
	case len(key) > MaxKeyBytes:
		return fmt.Sprintf("the kv key is %d bytes long: the limit is %d", len(key), MaxKeyBytes)
	case !utf8.ValidString(key):
		return "the kv key is not UTF-8 text"
	case utf8.RuneCountInString(key) > frame.DBRequestKeyMaxLength:
		return fmt.Sprintf("the kv key is %d code points long: the limit is %d", utf8.RuneCountInString(key), frame.DBRequestKeyMaxLength)
	}
	return ""
}

// valueProblem says what keeps raw, one JSON text, from being a kv value,
// "" when nothing does. A kv value is JSON that reads back as what was
// stored: one value, nested at most jsonscan.MaxDepth deep, UTF-8, no key
// twice in an object, every number finite as a double (1e999 is read as
// Infinity, which JSON cannot carry back), no string or key with an unpaired
// surrogate escape (read as U+FFFD by every decoder but JavaScript's). The
// same rule holds for a value the app writes and one an import brings.
func valueProblem(raw string) string {
	if !utf8.ValidString(raw) {
		return "the kv value is not UTF-8 text"
	}
	var d jsonscan.Decoder
	d.Reset(raw)
	why := walkValue(&d)
	if why == "" && !d.End() {
		why = "the kv value is not one JSON value"
	}
	if why == "" && d.Err != nil {
		why = "the kv value is not JSON: " + d.Err.Error()
	}
	return why
}

// walkValue reads one value of d for valueProblem.
func walkValue(d *jsonscan.Decoder) string {
	switch d.Peek() {
	case jsonscan.Object:
		d.BeginObject()
		var keys jsonscan.KeySet
		for first := true; d.ObjMore(first); first = false {
			k, ok := d.Key()
			if !ok {
				return ""
			}
			if d.Lone {
				return fmt.Sprintf("the kv value has a key with an unpaired surrogate escape (\\ud800–\\udfff without its pair): %q", k)
			}
			if keys.Add(k) {
				return fmt.Sprintf("the kv value names the key %q twice in one object", k)
			}
			if why := walkValue(d); why != "" {
				return why
			}
		}
	case jsonscan.Array:
		d.BeginArray()
		for first := true; d.ArrMore(first); first = false {
			if why := walkValue(d); why != "" {
				return why
			}
		}
	case jsonscan.String:
		if s, ok := d.String(); ok && d.Lone {
			return fmt.Sprintf("the kv value has a string with an unpaired surrogate escape (\\ud800–\\udfff without its pair): %q", clip(s, 40))
		}
	case jsonscan.Number:
		if n, ok := d.Number(); ok && math.IsInf(jsonscan.ParseFloat(n), 0) {
			return fmt.Sprintf("the kv value has the number %s, beyond a double's range: it would read back as Infinity", clip(n, 40))
		}
	default:
		d.Skip()
	}
	return ""
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
	if why := valueProblem(buf.String()); why != "" {
		return sqlErr("%s", why)
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
