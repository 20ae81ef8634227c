package agent

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// metaCheck checks the schema v (at JSON pointer ptr) and its subschemas
// against what draft d's meta-schema requires of each keyword, as v5 does
// before compiling: a keyword of another draft is not looked at.
func metaCheck(v any, d draft, ptr string) error { return metaCheckIn(v, d, ptr, metaState{}) }

// metaState is where v5's check of a 2020-12 schema stands. That
// meta-schema is the top one (definitions, dependencies) over seven
// vocabulary meta-schemas whose subschemas are "$dynamicRef": "#meta"; v5
// resolves such a reference to the outermost meta-schema of the dynamic
// scope other than the referring one. So a subschema below a vocabulary
// keyword is checked by the whole meta-schema, but one below the top
// meta-schema's definitions or dependencies, once some vocabulary was
// entered on the way (first), by that vocabulary's meta-schema alone.
type metaState struct {
	vocab string // "" for the whole meta-schema, else the one vocabulary
	first string // the first vocabulary entered from the root, "" for none
}

// vocab2020 maps each 2020-12 keyword to its vocabulary ("top" for the top
// meta-schema's own).
var vocab2020 = sync.OnceValue(func() map[string]string {
	m := map[string]string{"definitions": "top", "dependencies": "top"}
	for voc, kws := range map[string]string{
		"core":        "$id $schema $ref $anchor $dynamicRef $dynamicAnchor $vocabulary $comment $defs",
		"applicator":  "prefixItems items contains additionalProperties properties patternProperties dependentSchemas propertyNames if then else allOf anyOf oneOf not",
		"unevaluated": "unevaluatedItems unevaluatedProperties",
		"validation":  "type const enum multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern maxItems minItems uniqueItems maxContains minContains maxProperties minProperties required dependentRequired",
		"meta-data":   "title description default deprecated readOnly writeOnly examples",
		"format":      "format",
		"content":     "contentEncoding contentMediaType contentSchema",
	} {
		for _, k := range strings.Fields(kws) {
			m[k] = voc
		}
	}
	return m
})

func metaCheckIn(v any, d draft, ptr string, st metaState) error {
	var child metaState // the state of the subschemas of the keyword being checked
	metaCheck := func(v any, d draft, ptr string) error { return metaCheckIn(v, d, ptr, child) }
	schemaList := func(list []any, d draft, at string, bad badFunc) error {
		if len(list) == 0 {
			return bad(at, "must be a non-empty array of schemas")
		}
		for i, s := range list {
			if err := metaCheck(s, d, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
		return nil
	}
	schemaMap := func(x any, d draft, at string, patterns bool, bad badFunc) error {
		obj, ok := x.(map[string]any)
		if !ok {
			return bad(at, "must be an object of schemas")
		}
		for _, k := range sortedKeys(obj) {
			if patterns {
				if _, err := regexp.Compile(k); err != nil {
					return bad(at, "%q is not a valid regular expression: %v", k, err)
				}
			}
			if err := metaCheck(obj[k], d, at+"/"+escapePtr(k)); err != nil {
				return err
			}
		}
		return nil
	}
	var vocabs map[string]string
	if d == 2020 {
		vocabs = vocab2020()
	}
	bad := func(at, format string, a ...any) error {
		if at == "" {
			at = "/"
		}
		return fmt.Errorf("at %s: %s", at, fmt.Sprintf(format, a...))
	}
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool && d >= 6 {
			return nil
		}
		if d == 4 {
			return bad(ptr, "a schema must be an object (draft-04 has no boolean schemas)")
		}
		return bad(ptr, "a schema must be an object or a boolean, not %s", jsonType(v))
	}
	for _, k := range sortedKeys(m) {
		x := m[k]
		at := ptr + "/" + escapePtr(k)
		if d == 2020 {
			voc := vocabs[k]
			switch {
			case voc == "":
				continue // no keyword of 2020-12
			case st.vocab != "" && voc != st.vocab:
				continue
			case voc == "top" && st.first != "":
				child = metaState{vocab: st.first, first: st.first}
			case voc == "top":
				child = metaState{}
			case st.first != "":
				child = metaState{first: st.first}
			default:
				child = metaState{first: voc}
			}
		}
		var err error
		switch k {
		case "$schema":
			if s, ok := x.(string); !ok || !isURI(s) {
				err = bad(at, "$schema must be a URI")
			}
		case "id":
			if d == 4 {
				if s, ok := x.(string); !ok || !isURIReference(s) {
					err = bad(at, "id must be a URI reference")
				}
			}
		case "$id":
			if d >= 6 {
				s, ok := x.(string)
				if !ok || !isURIReference(s) || (d >= 2019 && strings.Contains(strings.TrimSuffix(s, "#"), "#")) {
					err = bad(at, "$id must be a URI reference without a fragment")
				}
			}
		case "$ref":
			s, ok := x.(string)
			if !ok || (d >= 6 && !isURIReference(s)) {
				err = bad(at, "$ref must be a URI reference")
			}
		case "$comment":
			if d >= 7 {
				err = wantString(x, at, bad)
			}
		case "title", "description", "format":
			err = wantString(x, at, bad)
		case "contentMediaType", "contentEncoding":
			if d >= 7 {
				err = wantString(x, at, bad)
			}
		case "readOnly", "writeOnly":
			if d >= 7 {
				err = wantBool(x, at, bad)
			}
		case "deprecated":
			if d >= 2019 {
				err = wantBool(x, at, bad)
			}
		case "uniqueItems":
			err = wantBool(x, at, bad)
		case "examples":
			if _, ok := x.([]any); !ok && d >= 7 {
				err = bad(at, "examples must be an array")
			}
		case "multipleOf":
			if r := ratOf(x); r == nil || r.Sign() <= 0 {
				err = bad(at, "multipleOf must be a number above 0")
			}
		case "maximum", "minimum":
			if ratOf(x) == nil {
				err = bad(at, "%s must be a number", k)
			}
		case "exclusiveMaximum", "exclusiveMinimum":
			if d == 4 {
				err = wantBool(x, at, bad)
			} else if ratOf(x) == nil {
				err = bad(at, "%s must be a number", k)
			}
		case "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties":
			err = wantCount(x, at, k, bad)
		case "maxContains", "minContains":
			if d >= 2019 {
				err = wantCount(x, at, k, bad)
			}
		case "pattern":
			s, ok := x.(string)
			if !ok {
				err = bad(at, "pattern must be a string")
			} else if _, rerr := regexp.Compile(s); rerr != nil {
				err = bad(at, "pattern is not a valid regular expression: %v", rerr)
			}
		case "additionalItems":
			switch {
			case d == 2020:
			case d == 4:
				if _, isBool := x.(bool); !isBool {
					err = metaCheck(x, d, at)
				}
			default:
				err = metaCheck(x, d, at)
			}
		case "additionalProperties":
			if _, isBool := x.(bool); !isBool || d != 4 {
				err = metaCheck(x, d, at)
			}
		case "items":
			if list, isList := x.([]any); isList && d < 2020 {
				err = schemaList(list, d, at, bad)
			} else {
				err = metaCheck(x, d, at)
			}
		case "prefixItems":
			if d == 2020 {
				list, _ := x.([]any)
				if _, isList := x.([]any); !isList {
					err = bad(at, "prefixItems must be an array of schemas")
				} else {
					err = schemaList(list, d, at, bad)
				}
			}
		case "allOf", "anyOf", "oneOf":
			list, isList := x.([]any)
			if !isList {
				err = bad(at, "%s must be an array of schemas", k)
			} else {
				err = schemaList(list, d, at, bad)
			}
		case "not":
			err = metaCheck(x, d, at)
		case "contains", "propertyNames":
			if d >= 6 {
				err = metaCheck(x, d, at)
			}
		case "if", "then", "else":
			if d >= 7 {
				err = metaCheck(x, d, at)
			}
		case "unevaluatedItems", "unevaluatedProperties", "contentSchema":
			if d >= 2019 {
				err = metaCheck(x, d, at)
			}
		case "required":
			err = stringArray(x, at, d == 4, bad)
		case "definitions":
			err = schemaMap(x, d, at, false, bad)
		case "properties", "patternProperties":
			err = schemaMap(x, d, at, k == "patternProperties", bad)
		case "$defs", "dependentSchemas":
			if d >= 2019 {
				err = schemaMap(x, d, at, false, bad)
			}
		case "dependentRequired":
			if d >= 2019 {
				obj, ok := x.(map[string]any)
				if !ok {
					err = bad(at, "dependentRequired must be an object")
					break
				}
				for _, name := range sortedKeys(obj) {
					if err = stringArray(obj[name], at+"/"+escapePtr(name), false, bad); err != nil {
						break
					}
				}
			}
		case "dependencies":
			obj, ok := x.(map[string]any)
			if !ok {
				err = bad(at, "dependencies must be an object")
				break
			}
			for _, name := range sortedKeys(obj) {
				dat := at + "/" + escapePtr(name)
				if _, isList := obj[name].([]any); isList {
					err = stringArray(obj[name], dat, d == 4, bad)
				} else if _, isBool := obj[name].(bool); isBool && d == 4 {
					err = bad(dat, "a dependency must be a schema or an array of names")
				} else {
					err = metaCheck(obj[name], d, dat)
				}
				if err != nil {
					break
				}
			}
		case "enum":
			list, ok := x.([]any)
			switch {
			case !ok:
				err = bad(at, "enum must be an array")
			case d < 2019 && len(list) == 0:
				err = bad(at, "enum must not be empty")
			case d < 2019:
				if i, j, dup := duplicateItems(list); dup {
					err = bad(at, "enum members %d and %d are equal", i, j)
				}
			}
		case "type":
			err = typeKeyword(x, at, bad)
		case "$vocabulary":
			if d >= 2019 {
				obj, ok := x.(map[string]any)
				if !ok {
					err = bad(at, "$vocabulary must be an object")
					break
				}
				for _, u := range sortedKeys(obj) {
					if _, isBool := obj[u].(bool); !isBool || !isURI(u) {
						err = bad(at, "$vocabulary maps URIs to booleans")
						break
					}
				}
			}
		}
		if err != nil {
			return err
		}
	}
	if d == 4 {
		if _, ok := m["exclusiveMaximum"]; ok {
			if _, ok := m["maximum"]; !ok {
				return bad(ptr, "exclusiveMaximum needs maximum")
			}
		}
		if _, ok := m["exclusiveMinimum"]; ok {
			if _, ok := m["minimum"]; !ok {
				return bad(ptr, "exclusiveMinimum needs minimum")
			}
		}
	}
	return nil
}

type badFunc func(at, format string, a ...any) error

func wantString(x any, at string, bad badFunc) error {
	if _, ok := x.(string); !ok {
		return bad(at, "must be a string")
	}
	return nil
}

func wantBool(x any, at string, bad badFunc) error {
	if _, ok := x.(bool); !ok {
		return bad(at, "must be a boolean")
	}
	return nil
}

// wantCount requires a non-negative integer (1.0 counts as one).
func wantCount(x any, at, k string, bad badFunc) error {
	r := ratOf(x)
	if r == nil || !r.IsInt() || r.Sign() < 0 {
		return bad(at, "%s must be a non-negative integer", k)
	}
	return nil
}

func stringArray(x any, at string, nonEmpty bool, bad badFunc) error {
	list, ok := x.([]any)
	if !ok {
		return bad(at, "must be an array of names")
	}
	if nonEmpty && len(list) == 0 {
		return bad(at, "must not be empty")
	}
	for _, s := range list {
		if _, ok := s.(string); !ok {
			return bad(at, "must be an array of names")
		}
	}
	if i, j, dup := duplicateItems(list); dup {
		return bad(at, "names %d and %d are the same", i, j)
	}
	return nil
}

func simpleType(t string) bool {
	switch t {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

func typeKeyword(x any, at string, bad badFunc) error {
	const want = `type must be one of "array", "boolean", "integer", "null", "number", "object", "string" or a non-empty array of them`
	switch x := x.(type) {
	case string:
		if !simpleType(x) {
			return bad(at, "%s", want)
		}
		return nil
	case []any:
		if len(x) == 0 {
			return bad(at, "%s", want)
		}
		for _, t := range x {
			if s, ok := t.(string); !ok || !simpleType(s) {
				return bad(at, "%s", want)
			}
		}
		if _, _, dup := duplicateItems(x); dup {
			return bad(at, "type names a type twice")
		}
		return nil
	}
	return bad(at, "%s", want)
}
