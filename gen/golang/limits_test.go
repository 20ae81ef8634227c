package golang

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/gen/model"
	"github.com/snuggen/snuggen/schemas"
)

// TestFieldLimits: every string field with a maxLength, in a frame, a nested
// object, the error object or the envelope, has its <Struct><Field>MaxLength
// constant in spec.go with the schema's value, and there is no other.
func TestFieldLimits(t *testing.T) {
	m, err := load.Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(m)
	if err != nil {
		t.Fatal(err)
	}
	var spec string
	for _, f := range files {
		if strings.HasSuffix(f.Name, "/spec.go") {
			spec = string(f.Contents)
		}
	}
	want := map[string]int{}
	add := func(name string, o *model.Object) {
		for _, fl := range o.Fields {
			if fl.Type.Kind == model.String && fl.Type.MaxLength != nil {
				want[FieldLimitName(name, fl.Name)] = *fl.Type.MaxLength
			}
		}
	}
	g := &gen{m: m, structs: map[string]*model.Object{}}
	g.collectStructs()
	for _, fr := range m.Frames {
		add(fr.Title, fr.Body)
	}
	for name, o := range g.structs {
		add(name, o)
	}
	add("Envelope", m.Envelope)
	for _, name := range []string{"ErrorMessageMaxLength", "OpenURLResultReasonMaxLength", "NetRequestURLMaxLength"} {
		if _, ok := want[name]; !ok {
			t.Errorf("the schemas give no %s", name)
		}
	}
	got := map[string]int{}
	for _, mm := range regexp.MustCompile(`(?m)^\s+(\w+MaxLength) += (\d+)$`).FindAllStringSubmatch(spec, -1) {
		var n int
		fmt.Sscan(mm[2], &n)
		got[mm[1]] = n
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s = %d in spec.go, want %d", name, got[name], n)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("spec.go has %s, which no schema field gives", name)
		}
	}
}
