package sse_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit/agent/internal/sse"
)

func TestRead(t *testing.T) {
	stream := ": keep-alive\r\n" +
		"event: a\r\ndata: one\r\ndata:two\r\n\r\n" +
		"data: {\"x\":1}\n\n" +
		"id: 7\nretry: 100\n\n" + // no data, no event: not dispatched
		"event: last\ndata: end" // no trailing blank line
	var got []sse.Event
	if err := sse.Read(strings.NewReader(stream), func(e sse.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []sse.Event{{"a", "one\ntwo"}, {"", `{"x":1}`}, {"last", "end"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	stop := errors.New("stop")
	n := 0
	err := sse.Read(strings.NewReader("data: 1\n\ndata: 2\n\n"), func(sse.Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("callback error: %v after %d", err, n)
	}
	long := "data: " + strings.Repeat("x", sse.MaxLine+1) + "\n\n"
	if err := sse.Read(strings.NewReader(long), func(sse.Event) error { return nil }); err == nil {
		t.Fatal("an over-long line was accepted")
	}
}
