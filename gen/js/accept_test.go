package js

import (
	"strings"
	"testing"

	"github.com/snuggen/snuggen/gen/model"
)

func ip(n int) *int       { return &n }
func i64(n int64) *int64  { return &n }
func sp(s string) *string { return &s }

func inlineAcceptor(t *testing.T, typ *model.Type) (string, error) {
	t.Helper()
	h := &acceptHoister{count: map[string]int{}, names: map[string]string{}}
	s := h.inline(typ)
	return strings.ReplaceAll(s, pure, ""), h.err
}

// Each kind renders as its combinator, with absent bounds left out and
// required fields moved first.
func TestAcceptorRendering(t *testing.T) {
	str := func(t *model.Type) *model.Type { t.Kind = model.String; return t }
	for _, c := range []struct {
		typ  *model.Type
		want string
	}{
		{str(&model.Type{}), "aText"},
		{str(&model.Type{MaxLength: ip(300)}), "aString(0,300)"},
		{str(&model.Type{MinLength: ip(1), MaxLength: ip(128)}), "aString(1,128)"},
		{str(&model.Type{MinLength: ip(2)}), "aString(2)"},
		{str(&model.Type{Enum: []string{"light", "dark"}}), `oneOf(["light","dark"])`},
		{str(&model.Type{Const: sp("sqlite3")}), `oneOf(["sqlite3"])`},
		{&model.Type{Kind: model.Integer, Minimum: i64(100), Maximum: i64(599)}, "anInteger(100,599)"},
		{&model.Type{Kind: model.Integer, Maximum: i64(5)}, "anInteger(void 0,5)"},
		{&model.Type{Kind: model.Number}, "aNumber()"},
		{&model.Type{Kind: model.Boolean}, "aBoolean"},
		{&model.Type{Kind: model.Any}, "anything"},
		{&model.Type{Kind: model.Scalar}, "aScalar"},
		{&model.Type{Kind: model.RawObject}, "isObject"},
		{&model.Type{Kind: model.Array, MinItems: ip(1), Elem: &model.Type{Kind: model.Integer}}, "anArray(anInteger(),1)"},
		{&model.Type{Kind: model.Map, MaxProperties: ip(64), Elem: &model.Type{Kind: model.String}}, "aMap(aText,64)"},
		{&model.Type{Kind: model.Map, KeyMinLength: ip(1), KeyMaxLength: ip(128), Elem: &model.Type{Kind: model.String}}, "aKeyedMap(aText,void 0,1,128)"},
		{&model.Type{Kind: model.Struct, Object: &model.Object{
			Fields: []*model.Field{
				{Name: "text", Type: &model.Type{Kind: model.String}},
				{Name: "ok", Required: true, Type: &model.Type{Kind: model.Boolean}},
			},
			Conds: []model.Cond{{When: []model.Pin{{Field: "ok", Equals: true}}, Require: []string{"text"}}},
		}}, `aStruct({"ok":aBoolean,"text":aText},1,[[aStruct({"ok":oneOf([true])},1),aStruct({"text":aText},1)]])`},
		// A condition's own fields: a one-step check as it is, an object as
		// isObject (not its fields again), anything else anything; a pin is
		// the one value it may have.
		{&model.Type{Kind: model.Struct, Object: &model.Object{
			Fields: []*model.Field{
				{Name: "ok", Required: true, Type: &model.Type{Kind: model.Boolean}},
				{Name: "n", Type: &model.Type{Kind: model.Integer}},
				{Name: "e", Type: &model.Type{Kind: model.Struct, Object: &model.Object{Fields: []*model.Field{{Name: "code", Type: &model.Type{Kind: model.String}}}}}},
				{Name: "s", Type: &model.Type{Kind: model.Boolean}},
			},
			Conds: []model.Cond{{When: []model.Pin{{Field: "ok", Equals: false}, {Field: "s", Equals: true}}, Require: []string{"n", "e"}, Pins: []model.Pin{{Field: "s", Equals: false}}}},
		}}, `aStruct({"ok":aBoolean,"n":anInteger(),"e":aStruct({"code":aText},0),"s":aBoolean},1,[[aStruct({"ok":oneOf([false]),"s":oneOf([true])},2),aStruct({"n":anything,"e":isObject,"s":oneOf([false])},2)]])`},
	} {
		got, err := inlineAcceptor(t, c.typ)
		if err != nil {
			t.Errorf("%s: %v", c.want, err)
			continue
		}
		if got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

// A constraint the acceptors cannot check is an error, never a check left out.
func TestAcceptorRefusesWhatItCannotCheck(t *testing.T) {
	for _, c := range []struct {
		typ  *model.Type
		want string
	}{
		{&model.Type{Kind: model.String, Minimum: i64(1)}, "minimum on a string"},
		{&model.Type{Kind: model.Integer, MaxLength: ip(3)}, "maxLength on a integer"},
		{&model.Type{Kind: model.Array, MaxProperties: ip(3)}, "maxProperties on a array"},
		{&model.Type{Kind: model.RawObject, KeyMaxLength: ip(3)}, "propertyNames on an object"},
		{&model.Type{Kind: model.String, MaxLength: ip(3), Enum: []string{"long"}}, `value "long" is outside`},
		{&model.Type{Kind: model.String, Enum: []string{"a"}, Const: sp("a")}, "both enum and const"},
		{&model.Type{Kind: model.Struct, Object: &model.Object{Name: "Tight", Strict: true}}, `object "Tight" is strict`},
		{&model.Type{Kind: model.Struct, Object: &model.Object{Fields: []*model.Field{{Name: "0", Type: &model.Type{Kind: model.Boolean}}}}}, "array index"},
	} {
		_, err := inlineAcceptor(t, c.typ)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
	}
}

// Every host→app frame of the real schemas has an acceptor, and
// HOST_TO_APP lists exactly those frames.
func TestAcceptorsCoverHostToApp(t *testing.T) {
	var validate string
	for _, f := range generate(t) {
		if f.Name == PathValidate {
			validate = string(f.Contents)
		}
	}
	i := strings.Index(validate, "export const HOST_TO_APP")
	if i < 0 {
		t.Fatal("validate.mjs has no HOST_TO_APP")
	}
	table := validate[i:]
	m := loadModel(t)
	for _, f := range m.Frames {
		has := strings.Contains(table, jsonText(f.Type)+": accept"+f.Title)
		if has != (f.Direction == model.HostToApp) {
			t.Errorf("%s (%s): in HOST_TO_APP = %v", f.Type, f.Direction, has)
		}
	}
}

// checkFrame's bundle uses no acceptor, so it carries none: every combinator
// call is marked pure and HOST_TO_APP has plain keys.
func TestFramesBundleCarriesNoAcceptors(t *testing.T) {
	for _, f := range generate(t) {
		if f.Name == PathFrames && strings.Contains(string(f.Contents), "aStruct") {
			t.Errorf("%s carries the acceptors", f.Name)
		}
		if f.Name == PathScript && !strings.Contains(string(f.Contents), "__proto__:null") {
			t.Errorf("%s: HOST_TO_APP has a prototype", f.Name)
		}
	}
}

// acceptRegex case-folds only a pattern whose language does not change:
// ASCII classes that hold both cases of each letter, and nothing a fold or
// the loss of u could read differently (TestNode's case-folded locale test
// holds the locale pattern to the schema's on every short string); its
// groups capture, which test() reads the same.
func TestAcceptRegex(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"^[A-Za-z]{2,3}(?:-[Xx])?$", "/^[a-z]{2,3}(-x)?$/i"},
		{"^(?:[A-Za-z]|(?:[0-9]))$", `/^([a-z]|(\d))$/i`},
		{"^[0-9A-WYZa-wyz]-[A-Za-z0-9]{1,8}$", `/^[\da-wyz]-[\da-z]{1,8}$/i`},
		{"^[0-9]+$", `/^\d+$/i`},
		{"^[a-z]+$", "/^[a-z]+$/u"},         // one case only
		{"^[A-Za-z]+x$", "/^[A-Za-z]+x$/u"}, // a letter outside a class
		{"^[^A-Za-z]$", "/^[^A-Za-z]$/u"},   // negated
		{`^[A-Za-z]\d$`, `/^[A-Za-z]\d$/u`}, // an escape
		{"^[A-Za-z].$", "/^[A-Za-z].$/u"},   // a dot
		{"^(?i)[A-Za-z]$", "/^(?i)[A-Za-z]$/u"},
		{"^(?<n>[A-Za-z])$", "/^(?<n>[A-Za-z])$/u"}, // a named group
		{"^[A-Za-zé]$", "/^[A-Za-zé]$/u"},
	} {
		if got := acceptRegex(c.in); got != c.want {
			t.Errorf("acceptRegex(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
