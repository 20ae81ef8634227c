package agent

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// A responseSchema is checked against the host's limits (bounds.go), then
// compiled by santhosh-tekuri/jsonschema/v6 with every schema object's
// format keyword replaced by a format of the host's: the library checks an
// object's format before the object's other keywords and subschemas, so that
// format charges the object's cost (nodeCost.of) to the running validation's
// Meter, then checks the object's own format where its draft asserts one.

// Bounds on checking one reply against its schema (MaxValidationCost units,
// MaxValidationTime of the clock, whichever comes first). A unit is about one
// byte of text matched against one instruction of a pattern's program, some
// 10 to 30 ns; every other step of the validator is counted in the same
// units before it runs (see nodeCost.of). A schema whose references or
// combinators multiply the work by the reply's depth is stopped here rather
// than at compile time.
const (
	MaxValidationCost = 30_000_000
	MaxValidationTime = time.Second
)

// ErrValidationBudget is the end of a Meter's budget: the reply could not
// be checked against its schema within the host's bounds.
var ErrValidationBudget = errors.New("finding and checking the reply's object takes more work than the host allows")

// Meter bounds the work of the validations (and reply candidates) it is
// given: one per request, shared by everything done for it.
type Meter struct {
	ctx      context.Context
	left     int64
	deadline time.Time
	calls    int
}

// NewMeter returns a Meter with MaxValidationCost and MaxValidationTime
// that also stops when ctx ends.
func NewMeter(ctx context.Context) *Meter {
	return &Meter{ctx: ctx, left: MaxValidationCost, deadline: time.Now().Add(MaxValidationTime)}
}

// meterStop is the panic that ends a validation from inside the validator;
// Schema.Validate recovers it.
type meterStop struct{ err error }

// charge counts units of work about to be done, and stops the work (by
// panicking with meterStop) when the budget, the time or the context is
// spent.
func (m *Meter) charge(units int64) {
	m.left -= units
	if m.left < 0 {
		panic(meterStop{ErrValidationBudget})
	}
	m.calls++
	if m.calls%64 == 0 {
		if err := m.ctx.Err(); err != nil {
			panic(meterStop{context.Cause(m.ctx)})
		}
		if time.Now().After(m.deadline) {
			panic(meterStop{ErrValidationBudget})
		}
	}
}

// Charge counts units of work done outside a validation (decoding reply
// candidates) and reports whether the budget allows going on.
func (m *Meter) Charge(units int64) (err error) {
	defer func() {
		if v := recover(); v != nil {
			ms, ok := v.(meterStop)
			if !ok {
				panic(v)
			}
			err = ms.err
		}
	}()
	m.charge(units)
	return nil
}

// A compiled copy of a schema serves one validation at a time (its formats
// charge that validation's Meter). Each cached Schema keeps one; a
// validation that finds it busy compiles a spare, used once, while fewer
// than maxSpares exist in the process, else waits. A schema at the limits
// compiles to some 8 MB (400 patterns), so spares are not kept.
const maxSpares = 4

var spares = make(chan struct{}, maxSpares)

// Schema is a compiled responseSchema whose validations are metered, each
// by its own Meter; validations may run at once.
type Schema struct {
	doc     any // the schema, each object's format replaced by its meter's
	costs   []*nodeCost
	formats []string // each object's own format, "" for none
	old     bool     // draft-04, -06 or -07
	rootPre int64    // what the root costs before its own charge

	idle chan *instance // the kept copy, while no validation uses it
}

// instance is one compiled copy of a Schema.
type instance struct {
	sch   *jsonschema.Schema
	meter *Meter
	depth int64 // the reply's depth, in units: what each error the validator makes may cost
}

// SchemaError means a responseSchema is not a usable JSON Schema: it does
// not compile, refers to anything outside itself, or passes the limits above.
type SchemaError struct{ Err error }

func (e *SchemaError) Error() string { return "responseSchema: " + e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }

// maxCachedSchemas bounds the compiled-schema cache (least recently used
// out).
const maxCachedSchemas = 256

var schemaCache = struct {
	sync.Mutex
	order *list.List // of cacheEntry, most recent first
	byKey map[[32]byte]*list.Element
}{order: list.New(), byKey: map[[32]byte]*list.Element{}}

type cacheEntry struct {
	key [32]byte
	s   *Schema
}

// CompileSchema checks a responseSchema against the limits above, then
// compiles it with santhosh-tekuri/jsonschema/v6 (which checks it against
// its draft's meta-schema). A $ref must be a JSON pointer into the schema
// itself ("#/$defs/item"): nothing outside it is loaded (an app's schema
// must not make the host read files or fetch URLs), and $id below the root,
// anchors and dynamic references are refused. Compiled schemas are cached
// by content.
func CompileSchema(schema json.RawMessage) (*Schema, error) {
	key := sha256.Sum256(schema)
	schemaCache.Lock()
	if e, ok := schemaCache.byKey[key]; ok {
		schemaCache.order.MoveToFront(e)
		s := e.Value.(cacheEntry).s
		schemaCache.Unlock()
		return s, nil
	}
	schemaCache.Unlock()

	s, err := compileSchema(schema)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if e, ok := schemaCache.byKey[key]; ok { // compiled meanwhile by another request
		return e.Value.(cacheEntry).s, nil
	}
	schemaCache.byKey[key] = schemaCache.order.PushFront(cacheEntry{key, s})
	if schemaCache.order.Len() > maxCachedSchemas {
		last := schemaCache.order.Back()
		schemaCache.order.Remove(last)
		delete(schemaCache.byKey, last.Value.(cacheEntry).key)
	}
	return s, nil
}

func compileSchema(raw json.RawMessage) (*Schema, error) {
	doc, w, err := walkSchema(raw)
	if err != nil {
		return nil, err
	}
	s := &Schema{doc: doc, old: w.oldDraft, idle: make(chan *instance, 1)}
	for i, n := range w.nodes {
		own, _ := n.m["format"].(string)
		s.formats = append(s.formats, own)
		s.costs = append(s.costs, &n.cost)
		n.m["format"] = meterFormat(i)
	}
	if len(w.nodes) > 0 && w.byPtr[""] == 0 {
		s.rootPre = w.pre(0).units
	}
	in, err := s.compile()
	if err != nil {
		return nil, err
	}
	s.idle <- in
	return s, nil
}

// meterFormat names the format standing for schema object i.
func meterFormat(i int) string { return "snug-meter-" + strconv.Itoa(i) }

// schemaURL is the in-memory address a responseSchema compiles under.
const schemaURL = "snug:///response-schema.json"

// refuseLoader loads nothing: a responseSchema must be self-contained (the
// library's own meta-schemas are built in).
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("refusing to load %q: a responseSchema must be self-contained", u)
}

// compile makes one instance of s.
func (s *Schema) compile() (*instance, error) {
	in := &instance{}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.AssertFormat() // the meter formats run in every draft; each decides about its object's own format
	if s.old {
		c.AssertContent() // as drafts before 2019-09 have it
	}
	for i, cost := range s.costs {
		c.RegisterFormat(&jsonschema.Format{Name: meterFormat(i), Validate: in.format(cost, s.ownFormat(i))})
	}
	if err := c.AddResource(schemaURL, s.doc); err != nil {
		return nil, errors.New(s.plain(err.Error()))
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, errors.New(s.plain(strings.ReplaceAll(err.Error(), schemaURL, "")))
	}
	in.sch = sch
	return in, nil
}

// format is the format function standing for one schema object: the
// validator calls it each time the object is applied to a value, before
// the object's other checks, so it charges their cost to the running meter;
// then it checks the object's own format where the draft asserts it.
func (in *instance) format(cost *nodeCost, own func(any) error) func(any) error {
	return func(v any) error {
		in.meter.charge(cost.of(v) + in.depth)
		if own == nil {
			return nil
		}
		return own(v)
	}
}

// ownFormat is the check of schema object i's own format, nil where it
// asserts nothing (2019-09 and later make format an annotation).
func (s *Schema) ownFormat(i int) func(any) error {
	name := s.formats[i]
	if !s.old || name == "" {
		return nil
	}
	if name == "regex" { // bounded as a pattern is
		return func(v any) error {
			str, ok := v.(string)
			if !ok {
				return nil
			}
			_, err := checkPattern(str)
			return err
		}
	}
	return libraryFormat(name)
}

var libraryFormats sync.Map // format name → func(any) error (nil: unknown)

// libraryFormat is the library's check of a draft-07 format, found through
// its public API: a schema of that one format. An unknown format asserts
// nothing.
func libraryFormat(name string) func(any) error {
	if f, ok := libraryFormats.Load(name); ok {
		return f.(func(any) error)
	}
	var f func(any) error
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	doc := map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "format": name}
	if c.AddResource(schemaURL, doc) == nil {
		if sch, err := c.Compile(schemaURL); err == nil {
			f = func(v any) error {
				err := sch.Validate(v)
				var ve *jsonschema.ValidationError
				if errors.As(err, &ve) {
					if fk, ok := leaf(ve).ErrorKind.(*kind.Format); ok && fk.Err != nil {
						return fk.Err
					}
				}
				return err
			}
		}
	}
	libraryFormats.Store(name, f)
	return f
}

// plain replaces the meter's format names in a message with the schema's
// own formats (or "format").
func (s *Schema) plain(msg string) string {
	if !strings.Contains(msg, "snug-meter-") {
		return msg
	}
	for i := len(s.formats) - 1; i >= 0; i-- { // snug-meter-12 before snug-meter-1
		own := s.formats[i]
		if own == "" {
			own = "format"
		}
		msg = strings.ReplaceAll(msg, meterFormat(i), own)
	}
	return msg
}

// take returns s's kept copy, or a spare (spare true), or waits for either
// until ctx ends.
func (s *Schema) take(ctx context.Context) (in *instance, spare bool, err error) {
	select {
	case in := <-s.idle:
		return in, false, nil
	default:
	}
	select {
	case in := <-s.idle:
		return in, false, nil
	case spares <- struct{}{}:
		in, err := s.compile()
		if err != nil { // it compiled once: it compiles again
			<-spares
			return nil, false, fmt.Errorf("agent: compiling a schema again: %w", err)
		}
		return in, true, nil
	case <-ctx.Done():
		return nil, false, context.Cause(ctx)
	}
}

// put gives back what take returned.
func (s *Schema) put(in *instance, spare bool) {
	in.meter, in.depth = nil, 0
	if spare {
		<-spares
		return
	}
	s.idle <- in
}

// Validate checks v (decoded with UseNumber) against s within m's budget.
// A reply that does not match is a *ValidationError; a budget or context
// that runs out is an error wrapping ErrValidationBudget or the context's
// cause; a number beyond the bounds the validator handles cheaply is
// refused (*NumberError) before validating.
func (s *Schema) Validate(m *Meter, v any) (err error) {
	if err := checkNumbers(v); err != nil {
		return err
	}
	if err := m.ctx.Err(); err != nil {
		return context.Cause(m.ctx)
	}
	in, spare, err := s.take(m.ctx)
	if err != nil {
		return err
	}
	in.meter, in.depth = m, depthCost(v)
	defer func() {
		s.put(in, spare)
		if r := recover(); r != nil {
			ms, ok := r.(meterStop)
			if !ok {
				panic(r)
			}
			err = ms.err
		}
	}()
	m.charge(s.rootPre)
	verr := in.sch.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(verr, &ve) {
		return s.violation(ve)
	}
	return verr
}

// ValidationError is a reply that does not match its responseSchema: where
// (a JSON pointer into the reply) and why.
type ValidationError struct {
	InstanceLocation string // "" for the whole reply
	KeywordLocation  string // JSON pointer into the schema of the failing keyword
	Message          string
}

func (e *ValidationError) Error() string {
	loc := e.InstanceLocation
	if loc == "" {
		loc = "/"
	}
	return fmt.Sprintf("at %s: %s", loc, e.Message)
}

var english = message.NewPrinter(language.English)

// leaf is the innermost error under e that comes first in the reply (then
// in the schema): the most specific reason, where the others are its
// consequences (allOf failed, …), and the same one every time (the library
// meets properties in map order).
func leaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return e
	}
	var best *jsonschema.ValidationError
	for _, c := range e.Causes {
		if l := leaf(c); best == nil || before(l, best) {
			best = l
		}
	}
	return best
}

func before(a, b *jsonschema.ValidationError) bool {
	if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c < 0
	}
	if c := strings.Compare(a.SchemaURL, b.SchemaURL); c != 0 {
		return c < 0
	}
	return slices.Compare(a.ErrorKind.KeywordPath(), b.ErrorKind.KeywordPath()) < 0
}

// violation is the library's verdict as the host reports it.
func (s *Schema) violation(ve *jsonschema.ValidationError) *ValidationError {
	e := leaf(ve)
	switch k := e.ErrorKind.(type) { // a reply's long string is not quoted whole
	case *kind.Format:
		k.Want = s.plain(k.Want)
		k.Got = short(k.Got)
	case *kind.Pattern:
		k.Got, _ = short(k.Got).(string)
	case *kind.Const:
		k.Got = short(k.Got)
	case *kind.Enum:
		k.Got = short(k.Got)
	}
	kw := ""
	if _, frag, ok := strings.Cut(e.SchemaURL, "#"); ok {
		kw = frag
	}
	return &ValidationError{
		InstanceLocation: pointer(e.InstanceLocation),
		KeywordLocation:  kw + pointer(e.ErrorKind.KeywordPath()),
		Message:          s.plain(e.ErrorKind.LocalizedString(english)),
	}
}

// short is v, a string cut to its first 60 bytes and "…".
func short(v any) any {
	if s, ok := v.(string); ok && len(s) > 60 {
		return strings.ToValidUTF8(s[:60], "") + "…"
	}
	return v
}

// pointer is the JSON pointer of tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePtr(t))
	}
	return b.String()
}
