// Package vectors reads testdata/frames.json, the conformance vectors the Go
// and the node tests both run (format: testdata/README.md), and builds each
// vector's exact text, padding directives applied. Test support only.
package vectors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Want is a vector's expected verdict.
type Want struct {
	Verdict    string   `json:"verdict"` // accept, ignore or reject
	Type       string   `json:"type"`    // accept and ignore
	Code       string   `json:"code"`    // reject
	RequestID  *string  `json:"requestId"`
	Rules      []string `json:"rules"`      // reject: the set of rule ids
	AnswerType *string  `json:"answerType"` // reject: the answer's type, null for none
}

// Vector is one conformance case.
type Vector struct {
	Name     string          `json:"name"`
	Frame    json.RawMessage `json:"frame"`
	Raw      *string         `json:"raw"`
	PadTo    int             `json:"padTo"`
	PadCount int             `json:"padCount"`
	PadWith  string          `json:"padWith"`
	Want     Want            `json:"want"`
}

// Marker is the text a padding directive replaces.
const Marker = "$PAD"

// Text is the exact JSON text the vector checks: raw as given, or the frame
// in compact form with its padding directive applied.
func (v *Vector) Text() ([]byte, error) {
	if v.Raw != nil {
		return []byte(*v.Raw), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v.Frame); err != nil {
		return nil, fmt.Errorf("vector %q: %w", v.Name, err)
	}
	text := b.Bytes()
	if v.PadTo == 0 && v.PadCount == 0 {
		return text, nil
	}
	if bytes.Count(text, []byte(Marker)) != 1 {
		return nil, fmt.Errorf("vector %q: a padding directive needs exactly one %s", v.Name, Marker)
	}
	var pad string
	switch {
	case v.PadTo > 0:
		n := v.PadTo - (len(text) - len(Marker))
		if n < 0 {
			return nil, fmt.Errorf("vector %q: frame already longer than padTo", v.Name)
		}
		pad = strings.Repeat("x", n)
	default:
		with := v.PadWith
		if with == "" {
			with = "x"
		}
		if utf8.RuneCountInString(with) != 1 {
			return nil, fmt.Errorf("vector %q: padWith must be one character", v.Name)
		}
		pad = strings.Repeat(with, v.PadCount)
	}
	return bytes.Replace(text, []byte(Marker), []byte(pad), 1), nil
}

// File is the path of testdata/frames.json in this checkout.
func File() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "testdata", "frames.json")
}

// Load reads the vectors.
func Load() ([]Vector, error) {
	data, err := os.ReadFile(File())
	if err != nil {
		return nil, err
	}
	var doc struct {
		Vectors []Vector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("vectors: %s: %w", File(), err)
	}
	return doc.Vectors, nil
}
