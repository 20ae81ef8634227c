// Package model is the plain, language-neutral model of the Snug spec that
// gen/load builds from schemas/ and the emitters (gen/golang, gen/js) turn
// into code. It holds data only: no I/O, no validation logic, no imports of
// other gen packages, so every emitter can depend on it.
//
// Violations carry stable rule ids that both emitted validators share. A
// schema constraint's rule id is the JSON Schema keyword it fails (type,
// required, additionalProperties, const, enum, minLength, maxLength, minimum,
// maximum, minItems, maxItems, maxProperties, propertyNames, pattern); a frame-level
// rule or a refinement has the id given in rules.json (Rules.FrameRules,
// Rules.Refinements). Validation runs in stages (Rules.Stages): only the
// violations of the first stage that has any are reported.
package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// File is one generated file: a slash-separated path relative to the
// repository root and its full contents.
type File struct {
	Name     string
	Contents []byte
}

// Model is the whole spec as the generator sees it.
type Model struct {
	Version          int      // the protocol version (frames carry v: Version)
	ProtocolVersions []int    // versions this generation speaks
	Frames           []*Frame // in the order of rules.json's frame table
	Error            *Object  // the error object
	Envelope         *Object  // the chat envelope's JSON (its "snug" marker excluded)
	Rules            *Rules
	Schemas          []SchemaFile // every schema file, sorted by name
}

// SchemaFile is one schema as read from schemas/.
type SchemaFile struct {
	Name     string // file name, e.g. "net-request.schema.json"
	ID       string // its $id
	Contents []byte
}

// Direction of a frame.
const (
	AppToHost = "app->host"
	HostToApp = "host->app"
)

// Frame is one of the frame types of rules.json's frame table.
type Frame struct {
	Type       string  // "snug:net-request"
	Name       string  // "net-request"
	Title      string  // the schema's title, e.g. "NetRequest" (the type name emitters use)
	Doc        string  // the schema's description
	Direction  string  // AppToHost or HostToApp
	Strict     bool    // unknown keys reject the frame (additionalProperties: false)
	SizeClass  string  // name of its size class
	MaxBytes   int     // the size class's limit in bytes
	Answer     string  // the response type a host answers a rejected frame with; "" for host→app frames
	SchemaFile string  // "net-request.schema.json"
	SchemaID   string  // the schema's $id
	Body       *Object // the fields other than v and type
}

// Kind is the shape of a value.
type Kind int

// Kinds of values.
const (
	String    Kind = iota + 1
	Integer        // a JSON number with no fractional part
	Number         // any JSON number
	Boolean        //
	Struct         // an object with declared properties (Type.Object)
	RawObject      // an object with no declared properties, kept as raw JSON
	Map            // an object whose every value has type Type.Elem
	Array          // an array whose items have type Type.Elem
	Any            // any JSON value, kept as raw JSON (absent differs from null)
	Scalar         // string, number, boolean or null
)

// String names the kind the way JSON Schema's type keyword does.
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Integer:
		return "integer"
	case Number:
		return "number"
	case Boolean:
		return "boolean"
	case Struct, RawObject, Map:
		return "object"
	case Array:
		return "array"
	case Any:
		return "any"
	case Scalar:
		return "scalar"
	}
	return "invalid"
}

// Type is a value's shape and its constraints. Lengths count Unicode code
// points; nil pointers mean "no constraint".
type Type struct {
	Kind          Kind
	MinLength     *int
	MaxLength     *int
	Minimum       *int64
	Maximum       *int64
	Pattern       string   // a regular expression a string must match (a subset Go's regexp and JS's RegExp with the u flag read alike)
	Enum          []string // allowed string values
	Const         *string  // the one allowed string value
	Object        *Object  // Kind Struct
	Elem          *Type    // Kind Array (items) or Map (values)
	MinItems      *int
	MaxItems      *int
	MaxProperties *int
	KeyMinLength  *int   // Kind Map: propertyNames minLength
	KeyMaxLength  *int   // Kind Map: propertyNames maxLength
	Default       string // a string default, documentation only
	Ref           string // the schema file this type came from through $ref, if any
}

// Object is a struct-shaped object.
type Object struct {
	Name   string   // its title, e.g. "Capabilities"
	Doc    string   // its description
	Fields []*Field // in schema order
	Strict bool     // additionalProperties: false
	Conds  []Cond   // conditional requirements (allOf if/then)
}

// Field returns o's field named name, or nil (also when o is nil).
func (o *Object) Field(name string) *Field {
	if o == nil {
		return nil
	}
	for _, f := range o.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Field is one property of an Object.
type Field struct {
	Name     string // JSON name, case-sensitive
	Required bool
	Doc      string
	Type     *Type
	Pointer  string // JSON pointer of the property's schema in its file
}

// Cond is one "if every When field equals its value then Require are
// required and each Pins field, when present, equals its value" clause
// (JSON Schema's allOf if/then, the if naming and requiring its fields,
// then.required and then.properties {F: {const: X}}). Each value is a
// string or a bool. Require is checked with the shape (rule required),
// Pins with the values (rule const).
type Cond struct {
	When    []Pin
	Require []string
	Pins    []Pin
}

// Pin is one field and a value: a Cond applies when each of its When pins
// holds, and fixes each of its Pins (when present it must equal Equals).
type Pin struct {
	Field  string
	Equals any
}

// Principle is one of the protocol's rules R1–R7, stated in the project's
// own words (rules.json principles), for docs/protocol.md.
type Principle struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Rules is rules.json.
type Rules struct {
	Principles        []Principle // R1–R7, in order
	SizeClasses       []SizeClass
	Limits            []Limit
	ThreadConflictMs  []int
	ACECategories     []string // general categories a decoded xn-- label may hold (rules.json unicode)
	RTLScripts        []string // the right-to-left scripts (rules.json unicode)
	RecoverField      string   // requestId recovery: the top-level key
	RecoverMinLength  int      // requestId recovery, code points
	RecoverMaxLength  int
	Stages            []Stage
	Messages          map[string]string // keyword (and requiredWhen, constWhen, when, whenJoin, minLength1) → message template
	TypeNames         map[string]string // a Kind's String() (and "scalar") → its name in a type message
	NormativeRules    []NormativeRule
	FrameRules        []FrameRule
	Refinements       []Refinement
	Lists             []List // sorted by name
	EnvelopeTag       string
	EnvelopeMarker    string
	EnvelopeVersion   int
	Errors            []ErrorCode
	Events            []Event
	SandboxTokens     []string
	CSP               []CSPDirective // list references already expanded
	HostCSP           []CSPDirective // added by a serving host with its prelude; not in a packaged meta
	DefaultAnswer     string         // the answer type for a request with no pair
	Refusal           Refusal        // how an answer type without an error seat refuses
	ParseFailureLimit int            // PARSE_FAILURE_BUDGET
}

// Refusal says how a rejected request is answered when its answer type has no
// error object: Field set to Value, the code in ReasonField.
type Refusal struct {
	Field       string `json:"field"`
	Value       string `json:"value"`
	ReasonField string `json:"reasonField"`
}

// SizeClass is one R6 size class.
type SizeClass struct {
	Name  string
	Limit string // the limit's name, e.g. "MAX_DB_FRAME_BYTES"
	Bytes int
}

// Limit is a named number.
type Limit struct {
	Name  string // SCREAMING_SNAKE, e.g. "MAX_FRAME_BYTES"
	Value int
	Doc   string
}

// Stage is one validation stage and the schema keywords it checks.
type Stage struct {
	Name     string
	Keywords []string
}

// NormativeRule is one rule of the spec a host is held to, by the id a
// conformance case names (R1–R7, C1, C2, the handshake and the capability
// sections).
type NormativeRule struct {
	ID     string `json:"id"`
	Source string `json:"source"` // where the spec states it
	Title  string `json:"title"`
}

// FrameRule is a rule about the frame as a whole (R1, R6, JSON syntax).
type FrameRule struct {
	ID      string
	Code    string
	Message string
}

// Refinement kinds.
const (
	ForbidFieldWhen    = "forbidFieldWhen"    // Field must be absent when When.Field's value is in When.In
	MapKeyNotInList    = "mapKeyNotInList"    // no key of map Field is in list List
	MapKeysUnique      = "mapKeysUnique"      // keys of map Field are unique (case-insensitively if CaseInsensitive)
	URLReadIdentically = "urlReadIdentically" // string Field passes the open-url reading checks (Checks, Algorithm)
)

// Refinement is a rule JSON Schema cannot carry.
type Refinement struct {
	ID              string
	Frame           string // frame type
	Kind            string
	Field           string
	WhenField       string
	WhenIn          []string
	List            string
	CaseInsensitive bool
	Message         string
	Checks          []Check // sub-rules of URLReadIdentically, in check order
	Algorithm       string
}

// Check is one sub-rule of a refinement.
type Check struct {
	ID      string
	Message string
}

// List is a named list of strings.
type List struct {
	Name   string // SCREAMING_SNAKE, e.g. "STRIP_HEADERS"
	Values []string
}

// Retryable values of the error registry.
const (
	RetryYes                 = "yes"
	RetryNo                  = "no"
	RetryWhileAttemptsRemain = "whileAttemptsRemain"
)

// ErrorCode is one row of the error registry.
type ErrorCode struct {
	Code      string
	Retryable string // RetryYes, RetryNo or RetryWhileAttemptsRemain
	Reserved  bool
	Extension string // "db" for host extension codes, "" otherwise
	When      string
}

// Registry names the registry a code belongs to (R5): its extension ("db"),
// "net" for the net capability's own registry (Appendix A, the NET_ codes),
// else "core". A capability's registry is named like the capability.
func (e ErrorCode) Registry() string {
	switch {
	case e.Extension != "":
		return e.Extension
	case strings.HasPrefix(e.Code, "NET_"):
		return "net"
	}
	return "core"
}

// Event is a known event of the additive channel.
type Event struct {
	Name      string
	Direction string
	Data      []EventField
	// Object is Data as an object the emitters decode like a frame's
	// (named <Event>Data, every field required, other keys ignored).
	Object *Object
}

// EventField is one field of an event's data object.
type EventField struct {
	Name      string
	Type      string // string, integer, boolean, object
	MinLength *int
	MaxLength *int
	Minimum   *int64
	Maximum   *int64
	Enum      []string
}

// CSPDirective is one directive of the runner's Content-Security-Policy.
type CSPDirective struct {
	Name    string
	Sources []string
}

// Message fills the message template of key (rules.json messages.keywords)
// with vars: each {name} is replaced by vars[name].
func (r *Rules) Message(key string, vars map[string]string) string {
	s := r.Messages[key]
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// When states the condition when in words, from the "when" template and
// "whenJoin" (rules.json messages): "ok is true and streaming is false".
func (r *Rules) When(when []Pin) string {
	parts := make([]string, len(when))
	for i, p := range when {
		parts[i] = r.Message("when", map[string]string{"field": p.Field, "value": JSONText(p.Equals)})
	}
	return strings.Join(parts, r.Messages["whenJoin"])
}

// JSONText is v (a string or a bool) as JSON text, as JSON.stringify writes
// it: how a condition's value is named in messages.
func JSONText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("model: a const %v has no JSON text: %v", v, err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// FrameByType returns the frame of type t, or nil.
func (m *Model) FrameByType(t string) *Frame {
	for _, f := range m.Frames {
		if f.Type == t {
			return f
		}
	}
	return nil
}

// List returns the values of the list named name, or nil.
func (r *Rules) List(name string) []string {
	for _, l := range r.Lists {
		if l.Name == name {
			return l.Values
		}
	}
	return nil
}

// Limit returns the value of the limit named name and whether it exists.
func (r *Rules) Limit(name string) (int, bool) {
	for _, l := range r.Limits {
		if l.Name == name {
			return l.Value, true
		}
	}
	return 0, false
}

// RefinementsFor returns the refinements of frame type t, in rules order.
func (r *Rules) RefinementsFor(t string) []Refinement {
	var out []Refinement
	for _, x := range r.Refinements {
		if x.Frame == t {
			out = append(out, x)
		}
	}
	return out
}
