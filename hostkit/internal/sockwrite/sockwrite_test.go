package sockwrite

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestWriteTakesWhatFitsAndNeverWaits: to a peer that reads nothing, Write
// returns as soon as the socket's buffers are full, having written part of
// what it was given and no error; the peer then reads every byte written,
// in order, and nothing more.
func TestWriteTakesWhatFitsAndNeverWaits(t *testing.T) {
	client, server := tcpPair(t)
	w := New(server)
	if w == nil {
		t.Skip("no write without waiting on this platform")
	}
	chunk := make([]byte, 1<<20)
	var sent []byte
	start := time.Now()
	for i := 0; ; i++ {
		for j := range chunk {
			chunk[j] = byte(i*7 + j)
		}
		n, err := w.Write(chunk)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, chunk[:n]...)
		if n < len(chunk) {
			break
		}
		if i > 256 {
			t.Fatalf("256 MiB taken by a socket whose peer reads nothing")
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("writing until the socket was full took %v: Write waited", d)
	}
	server.Close()
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("the peer read %d bytes, %d were written, or out of order", len(got), len(sent))
	}
}

// TestNewRefusesWhatItCannotWrite: a connection with no descriptor (a
// pipe) gets no Writer, so the caller writes through the connection.
func TestNewRefusesWhatItCannotWrite(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if New(a) != nil {
		t.Fatal("a Writer for a pipe")
	}
}

// TestWriteAfterCloseFails: a closed connection's Write is an error, not a
// silent zero.
func TestWriteAfterCloseFails(t *testing.T) {
	_, server := tcpPair(t)
	w := New(server)
	if w == nil {
		t.Skip("no write without waiting on this platform")
	}
	server.Close()
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed connection succeeded")
	}
}
