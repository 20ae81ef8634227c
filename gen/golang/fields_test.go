package golang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/gen/model"
	"github.com/snuggen/snuggen/schemas"
)

// An object's decoder marks seen keys in one uint64 (bits 0 and 1 are v and
// type): 62 fields generate, 63 are refused with the object's name.
func TestFieldBitmaskLimit(t *testing.T) {
	for _, n := range []int{maxFields, maxFields + 1} {
		m, err := load.Load(schemas.FS, "schemas")
		if err != nil {
			t.Fatal(err)
		}
		body := m.FrameByType("snug:app-cancel").Body
		for i := len(body.Fields); i < n; i++ {
			body.Fields = append(body.Fields, &model.Field{Name: fmt.Sprintf("f%d", i), Type: &model.Type{Kind: model.Boolean}})
		}
		_, err = Generate(m)
		switch {
		case n <= maxFields && err != nil:
			t.Errorf("%d fields: %v", n, err)
		case n > maxFields && (err == nil || !strings.Contains(err.Error(), "snug:app-cancel has 63 fields")):
			t.Errorf("%d fields: %v, want a refusal naming the frame", n, err)
		}
	}
}
