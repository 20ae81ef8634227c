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
	return json.RawMessage(bytes.Clone(raw)), true, nil
}

func (d *appDB) kvSet(key string, value json.RawMessage) error {
	if err := checkKey(key); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, value); err != nil {
		return sqlErr("the kv value is not JSON: %v", err)
	}
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
