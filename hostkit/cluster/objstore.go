package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	lss3 "github.com/benbjohnson/litestream/s3"
	"github.com/superfly/ltx"

	"github.com/snuggen/snuggen/hostkit/metrics"
)

// objectStore is the parsed --object-store URL: a bucket and a base prefix
// under which every database has its own epoch-scoped prefixes.
type objectStore struct {
	raw    string
	bucket string
	base   string // no leading or trailing slash; may be empty
	query  url.Values
	user   *url.Userinfo
	// metrics counts the calls of every client made here (nil: none).
	metrics *metrics.Metrics
}

func parseObjectStore(raw string) (objectStore, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return objectStore{}, fmt.Errorf("cluster: object store URL: %v; give s3://bucket/prefix?endpoint=http://host:port", err)
	}
	if u.Scheme != "s3" {
		return objectStore{}, fmt.Errorf("cluster: object store URL %q: the scheme must be s3 (any S3-compatible server: s3://bucket/prefix?endpoint=http://host:port)", redactURL(u))
	}
	if u.Host == "" {
		return objectStore{}, fmt.Errorf("cluster: object store URL %q names no bucket: give s3://bucket/prefix", redactURL(u))
	}
	return objectStore{raw: raw, bucket: u.Host, base: strings.Trim(u.Path, "/"), query: u.Query(), user: u.User}, nil
}

func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// dbPrefix is the prefix of one database's replica at one epoch:
// <base>/<user>/<app>/e<epoch>, the user as a SHA-256 (any user name stays
// one path segment and out of the object names).
func (o objectStore) dbPrefix(k dbKey, epoch int64) string {
	sum := sha256.Sum256([]byte(k.user))
	return path.Join(o.base, "u-"+hex.EncodeToString(sum[:16]), url.PathEscape(k.app), "e"+strconv.FormatInt(epoch, 10))
}

// client is a Litestream replica client for prefix.
func (o objectStore) client(prefix string) (litestream.ReplicaClient, error) {
	c, err := lss3.NewReplicaClientFromURL("s3", o.bucket, prefix, o.query, o.user)
	if err != nil {
		return nil, fmt.Errorf("cluster: object store: %w", err)
	}
	return counted(c, o.metrics), nil
}

// probe writes, reads back and deletes one object under the base prefix:
// the start-up check that the bucket exists and the credentials may do
// what replication does.
func (o objectStore) probe(ctx context.Context, replica string) error {
	where := "s3://" + o.bucket + "/" + o.base
	fail := func(step string, err error) error {
		return fmt.Errorf("cluster: object store %s: %s failed: %v; check the bucket exists, the endpoint (?endpoint=) and the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)", where, step, err)
	}
	c, err := o.client(path.Join(o.base, "_probe", replica))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Init(ctx); err != nil {
		if os.Getenv("AWS_CA_BUNDLE") != "" && strings.Contains(err.Error(), "RootCAs") {
			return fmt.Errorf("cluster: object store %s: AWS_CA_BUNDLE is set, and Litestream's S3 client (which brings its own HTTP client) cannot use it: unset AWS_CA_BUNDLE (the system's certificate store is used): %v", where, err)
		}
		return fail("connecting", err)
	}
	want, err := probeFile()
	if err != nil {
		return fmt.Errorf("cluster: object store probe: %w", err)
	}
	if _, err := c.WriteLTXFile(ctx, 0, 1, 1, bytes.NewReader(want)); err != nil {
		return fail("writing a probe object", err)
	}
	rc, err := c.OpenLTXFile(ctx, 0, 1, 1, 0, 0)
	if err != nil {
		return fail("reading the probe object back", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return fail("reading the probe object back", err)
	}
	if !bytes.Equal(got, want) {
		return fail("reading the probe object back", fmt.Errorf("got %d bytes that differ from the %d written", len(got), len(want)))
	}
	if err := c.DeleteAll(ctx); err != nil {
		return fail("deleting the probe object", err)
	}
	return nil
}

// probeFile is a one-page LTX snapshot: the replica client reads an
// upload's header, so the probe is a real (tiny) replication file.
func probeFile() ([]byte, error) {
	var buf bytes.Buffer
	enc, err := ltx.NewEncoder(&buf)
	if err != nil {
		return nil, err
	}
	const pageSize = 512
	if err := enc.EncodeHeader(ltx.Header{Version: ltx.Version, PageSize: pageSize, Commit: 1,
		MinTXID: 1, MaxTXID: 1, Timestamp: time.Now().UnixMilli()}); err != nil {
		return nil, err
	}
	page := make([]byte, pageSize)
	if err := enc.EncodePage(ltx.PageHeader{Pgno: 1}, page); err != nil {
		return nil, err
	}
	enc.SetPostApplyChecksum(ltx.ChecksumFlag | ltx.ChecksumPage(1, page))
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
