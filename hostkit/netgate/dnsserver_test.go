package netgate

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
)

// dnsServer is a real DNS server on a loopback UDP port: it reads queries in
// the DNS wire format (RFC 1035 §4), answers A records from its zone (a name
// or "*.suffix"), AAAA with no data, anything else NXDOMAIN, and records every
// question it is asked. A gate whose resolver is dnsServer.resolver() sends
// its lookups here through Go's own DNS client, so a test sees exactly the
// queries that would have left the machine.
type dnsServer struct {
	conn *net.UDPConn
	zone map[string]netip.Addr
	done chan struct{}

	mu  sync.Mutex
	log []dnsQuery
}

// dnsQuery is one question the server received.
type dnsQuery struct {
	Name string // lower case, no trailing dot
	Type string // "A", "AAAA" or the number
}

const (
	dnsTypeA    = 1
	dnsTypeAAAA = 28
)

func startDNS(t testing.TB, zone map[string]string) *dnsServer {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: conn, zone: map[string]netip.Addr{}, done: make(chan struct{})}
	for name, ip := range zone {
		s.zone[name] = netip.MustParseAddr(ip)
	}
	go s.serve()
	t.Cleanup(func() {
		conn.Close()
		<-s.done
	})
	return s
}

func (s *dnsServer) serve() {
	defer close(s.done)
	buf := make([]byte, 4096)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return // closed
		}
		if reply := s.answer(buf[:n]); reply != nil {
			s.conn.WriteToUDP(reply, from)
		}
	}
}

// answer parses one query and builds its reply; nil drops a packet that is
// no DNS query.
func (s *dnsServer) answer(q []byte) []byte {
	if len(q) < 12 || q[2]&0x80 != 0 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	// QNAME: length-prefixed labels up to a zero byte.
	off := 12
	var labels []string
	for {
		if off >= len(q) {
			return nil
		}
		l := int(q[off])
		off++
		if l == 0 {
			break
		}
		if l > 63 || off+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[off:off+l]))
		off += l
	}
	if off+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[off : off+2])
	question := q[12 : off+4]
	name := strings.ToLower(strings.Join(labels, "."))
	typ := map[uint16]string{dnsTypeA: "A", dnsTypeAAAA: "AAAA"}[qtype]
	if typ == "" {
		typ = itoa(int(qtype))
	}
	s.mu.Lock()
	s.log = append(s.log, dnsQuery{Name: name, Type: typ})
	s.mu.Unlock()

	addr, known := s.lookup(name)
	rcode := byte(0)
	if !known {
		rcode = 3 // NXDOMAIN
	}
	r := make([]byte, 12, 64+len(question))
	copy(r[0:2], q[0:2])                  // ID
	r[2] = 0x80 | q[2]&0x79               // QR, the query's opcode and RD
	r[3] = 0x80 | rcode                   // RA, RCODE
	binary.BigEndian.PutUint16(r[4:6], 1) // QDCOUNT
	r = append(r, question...)
	if known && qtype == dnsTypeA && addr.Is4() {
		binary.BigEndian.PutUint16(r[6:8], 1) // ANCOUNT
		a := addr.As4()
		r = append(r, 0xc0, 12) // NAME: pointer to the question's name
		r = binary.BigEndian.AppendUint16(r, dnsTypeA)
		r = binary.BigEndian.AppendUint16(r, 1)  // class IN
		r = binary.BigEndian.AppendUint32(r, 60) // TTL
		r = binary.BigEndian.AppendUint16(r, 4)
		r = append(r, a[:]...)
	}
	return r
}

// set adds or replaces a name in the zone.
func (s *dnsServer) set(name, ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zone[name] = netip.MustParseAddr(ip)
}

func (s *dnsServer) lookup(name string) (netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.zone[name]; ok {
		return a, true
	}
	for k, a := range s.zone {
		if suffix, ok := strings.CutPrefix(k, "*"); ok && strings.HasSuffix(name, suffix) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// queries returns what was asked so far.
func (s *dnsServer) queries() []dnsQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// names returns the distinct names asked so far, sorted.
func (s *dnsServer) names() []string {
	var out []string
	for _, q := range s.queries() {
		if !slices.Contains(out, q.Name) {
			out = append(out, q.Name)
		}
	}
	slices.Sort(out)
	return out
}

// resolver is a Go DNS client that sends every query to this server.
func (s *dnsServer) resolver() *net.Resolver {
	addr := s.conn.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			if !strings.HasPrefix(network, "udp") {
				return nil, errors.New("the test DNS server speaks UDP only")
			}
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		},
	}
}

// TestDNSServerSpeaksDNS checks the helper itself with Go's DNS client: a
// name in the zone resolves, a wildcard matches, an unknown name is not
// found, and every question is recorded.
func TestDNSServerSpeaksDNS(t *testing.T) {
	s := startDNS(t, map[string]string{"a.example": "192.0.2.7", "*.w.example": "198.51.100.9"})
	r := s.resolver()
	got, err := r.LookupNetIP(context.Background(), "ip4", "a.example")
	if err != nil || len(got) != 1 || got[0].String() != "192.0.2.7" {
		t.Fatalf("a.example: %v %v", got, err)
	}
	got, err = r.LookupNetIP(context.Background(), "ip", "x.y.w.example")
	if err != nil || len(got) != 1 || got[0].String() != "198.51.100.9" {
		t.Fatalf("wildcard: %v %v", got, err)
	}
	_, err = r.LookupNetIP(context.Background(), "ip4", "nothing.example")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Fatalf("unknown name: %v", err)
	}
	if n := s.names(); !slices.Contains(n, "a.example") || !slices.Contains(n, "x.y.w.example") || !slices.Contains(n, "nothing.example") {
		t.Fatalf("log %v", s.queries())
	}
}
