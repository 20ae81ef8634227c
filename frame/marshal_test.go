package frame

import (
	"strings"
	"testing"
)

// An optional array that is present but empty stays on the wire: an exec
// result with no rows still carries "columns" and "rows", which the runtime's
// db.query maps over.
func TestMarshalKeepsEmptyOptionalArrays(t *testing.T) {
	zero := 0
	b, err := Marshal(&DBResponse{RequestID: "r1", OK: true, Result: &DBResult{
		Columns: []string{}, Rows: [][]any{}, Changes: &zero, LastInsertRowid: &zero,
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"columns":[]`, `"rows":[]`, `"changes":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	// A nil optional array is absent.
	b, err = Marshal(&DBResponse{RequestID: "r1", OK: true, Result: &DBResult{}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "columns") || strings.Contains(string(b), "rows") {
		t.Errorf("%s has fields that were never set", b)
	}
	// A parsed frame round-trips an empty array.
	f, err := Parse([]byte(`{"v":1,"type":"snug:db-request","requestId":"r","instanceId":"i","op":"exec","sql":"select 1","params":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err = Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"params":[]`) {
		t.Errorf("round trip of params [] gave %s", b)
	}
}
