package frame

import (
	"encoding/json"

	"github.com/snuggen/snuggen/internal/jsonscan"
	"github.com/snuggen/snuggen/internal/violation"
)

// The helpers below are what every generated decoder and check calls: they
// do not change with the schemas, so they are written once here and tested
// through Parse: the conformance vectors, the differential tests and fuzzing.

// seen records that the member with bit b of an object was read, marking the
// decoder's Dup when it was read before: a key twice is frame.duplicate-key.
func seen(d *jsonscan.Decoder, set *uint64, b uint) {
	if *set&(1<<b) != 0 {
		d.MarkDup()
	}
	*set |= 1 << b
}

// unknownKey handles a member no field of the object names: a key twice among
// them is a duplicate; a strict object adds schema-additionalProperties.
func unknownKey(d *jsonscan.Decoder, c *violation.Collector, keys *jsonscan.KeySet, key string, strict bool) {
	if keys.Add(key) {
		d.MarkDup()
	}
	if strict {
		c.AddKey(key, RuleSchemaAdditionalProperties, msgAdditionalProperties)
	}
	d.SkipChecked()
}

// typeError adds the schema-type violation msg (msgTypeString, …) of a
// value at key and skips it.
func typeError(d *jsonscan.Decoder, c *violation.Collector, key, msg string) {
	c.Add(key, RuleSchemaType, msg)
	d.SkipChecked()
}

// readString reads the next value as a string; any other value is a type
// violation at key ("" inside an array: the element's own path).
func readString(d *jsonscan.Decoder, c *violation.Collector, key string) (string, bool) {
	if v, ok := d.String(); ok {
		return v, true
	}
	typeError(d, c, key, msgTypeString)
	return "", false
}

// readBool reads the next value as a boolean.
func readBool(d *jsonscan.Decoder, c *violation.Collector, key string) (bool, bool) {
	if v, ok := d.Bool(); ok {
		return v, true
	}
	typeError(d, c, key, msgTypeBoolean)
	return false, false
}

// readInt reads the next value as an integer: a JSON number with no fraction
// (1.0 counts, as in JSON Schema).
func readInt(d *jsonscan.Decoder, c *violation.Collector, key string) (int, bool) {
	v, isInt, isNum := d.Int()
	if isInt {
		return int(v), true
	}
	if !isNum {
		d.SkipChecked()
	}
	c.Add(key, RuleSchemaType, msgTypeInteger)
	return 0, false
}

// readNumber reads the next value as a number (JSON.parse's double).
//
//lint:ignore U1000 the generator calls it for a field of type number; no schema has one today.
func readNumber(d *jsonscan.Decoder, c *violation.Collector, key string) (float64, bool) {
	if raw, ok := d.Number(); ok {
		v := jsonscan.ParseFloat(raw)
		return v, true
	}
	typeError(d, c, key, msgTypeNumber)
	return 0, false
}

// readScalar reads the next value as a string, number (json.Number), boolean
// or null.
func readScalar(d *jsonscan.Decoder, c *violation.Collector, key string) (any, bool) {
	if v, ok := d.Scalar(); ok {
		return v, true
	}
	typeError(d, c, key, msgTypeScalar)
	return nil, false
}

// readAny reads the next value, whatever it is, as raw JSON.
func readAny(d *jsonscan.Decoder) (json.RawMessage, bool) {
	raw, ok := d.SkipChecked()
	if !ok {
		return nil, false
	}
	return json.RawMessage(raw), true
}

// readRawObject reads the next value as a JSON object kept raw.
func readRawObject(d *jsonscan.Decoder, c *violation.Collector, key string) (json.RawMessage, bool) {
	if d.Peek() != jsonscan.Object {
		typeError(d, c, key, msgTypeObject)
		return nil, false
	}
	raw, _ := d.SkipChecked()
	return json.RawMessage(raw), true
}

// beginObject starts the next value as an object, pushing key onto the
// violation path (key "" pushes nothing: an array element's own path).
func beginObject(d *jsonscan.Decoder, c *violation.Collector, key string) bool {
	if !d.BeginObject() {
		typeError(d, c, key, msgTypeObject)
		return false
	}
	if key != "" {
		c.Push(key)
	}
	return true
}

// beginArray starts the next value as an array, like beginObject.
func beginArray(d *jsonscan.Decoder, c *violation.Collector, key string) bool {
	if !d.BeginArray() {
		typeError(d, c, key, msgTypeArray)
		return false
	}
	if key != "" {
		c.Push(key)
	}
	return true
}

// end pops what beginObject or beginArray pushed for key.
func end(c *violation.Collector, key string) {
	if key != "" {
		c.Pop()
	}
}

// minLen adds schema-minLength at key when s has fewer than n code points.
func minLen(c *violation.Collector, key, s string, n int) {
	if !jsonscan.LenAtLeast(s, n) {
		c.Add(key, RuleSchemaMinLength, msgMinLength(n))
	}
}

// maxLen adds schema-maxLength at key when s has more than n code points.
func maxLen(c *violation.Collector, key, s string, n int) {
	if !jsonscan.LenAtMost(s, n) {
		c.Add(key, RuleSchemaMaxLength, msgMaxLength(n))
	}
}

// keyLen adds schema-propertyNames at key k when its length is outside
// [lo, hi] code points (a bound of -1 is none).
func keyLen(c *violation.Collector, k string, lo, hi int) {
	if lo >= 0 && !jsonscan.LenAtLeast(k, lo) {
		c.AddKey(k, RuleSchemaPropertyNames, msgMinLength(lo))
	}
	if hi >= 0 && !jsonscan.LenAtMost(k, hi) {
		c.AddKey(k, RuleSchemaPropertyNames, msgMaxLength(hi))
	}
}

// foldCollisions returns the keys of m that equal another key case-insensitively:
// lowercased as JavaScript's toLowerCase does (jsonscan.LowerJS), so Go and JS agree.
// A check calls it only when its walk over the keys saw a possible collision.
func foldCollisions[V any](m map[string]V) []string {
	var out []string
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	if len(keys) <= 16 {
		var ascii, hit [16]bool
		for i, k := range keys {
			ascii[i] = jsonscan.IsASCII(k)
		}
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				if ascii[i] && ascii[j] && len(keys[i]) != len(keys[j]) {
					continue
				}
				if jsonscan.EqualLowerJS(keys[i], keys[j]) {
					hit[i], hit[j] = true, true
				}
			}
		}
		for i, k := range keys {
			if hit[i] {
				out = append(out, k)
			}
		}
		return out
	}
	count := make(map[string]int, len(keys))
	for _, k := range keys {
		count[jsonscan.LowerJS(k)]++
	}
	for _, k := range keys {
		if count[jsonscan.LowerJS(k)] > 1 {
			out = append(out, k)
		}
	}
	return out
}

// required adds schema-required at key when bit b of got is not set.
func required(c *violation.Collector, got uint64, b uint, key string) {
	if got&(1<<b) == 0 {
		c.Add(key, RuleSchemaRequired, msgRequired)
	}
}

// Truncate returns s cut to at most n code points, the unit of the
// protocol's string limits.
func Truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// optional is s as an optional field: nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
