// Package sse is the streaming HTTP exchange the OpenAI and Anthropic
// backends share: post a JSON body, map the status, read the
// text/event-stream (the WHATWG server-sent events format). Its limit: it
// knows nothing of either API's payloads.
package sse

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// MaxLine bounds one line of the stream; a longer line is an error, not an
// unbounded allocation.
const MaxLine = 4 << 20

// Event is one dispatched server-sent event.
type Event struct {
	Name string // the "event:" field, "" when absent
	Data string // the "data:" lines joined with "\n"
}

// Read calls fn for each event in r until r ends or fn returns an error.
// It returns r's own error (a dropped connection, a cancelled context) as it
// comes. Whether the stream ended complete is the caller's to judge from the
// events it saw.
func Read(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var ev Event
	var data []string
	pending := false
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if pending {
				ev.Data = strings.Join(data, "\n")
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data, pending = Event{}, data[:0], false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment, e.g. a keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name, pending = value, true
		case "data":
			data, pending = append(data, value), true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading event stream: %w", err)
	}
	if pending {
		// A final event without its blank line still counts when complete
		// (some servers close right after the last data line).
		ev.Data = strings.Join(data, "\n")
		return fn(ev)
	}
	return nil
}
