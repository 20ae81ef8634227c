package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/snuggen/snuggen/hostkit/metrics"
)

// The operator's view of a replica: its metrics hooks (Config.Metrics,
// hostkit/metrics) and its readiness (Ready, the host's /readyz).

// renewState is when the leases were last renewed, for Ready.
type renewState struct {
	ok     atomic.Int64 // unix nanoseconds of the last successful round
	failed atomic.Bool  // the last round failed
}

// renewed records one renewal round of this replica's leases.
func (c *Cluster) renewed(err error) {
	c.cfg.Metrics.LeaseRenewal(err)
	c.renew.failed.Store(err != nil)
	if err == nil {
		c.renew.ok.Store(time.Now().UnixNano())
	}
}

// heldLeases counts the databases this replica owns and serves (opened,
// not lost): the leases-held gauge, read at each scrape.
func (c *Cluster) heldLeases() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, o := range c.owned {
		if o.isReady() && !o.lost.Load() {
			n++
		}
	}
	return n
}

// Ready reports whether this replica can serve: PostgreSQL answers, and,
// while it owns databases, its last lease renewal succeeded within the
// lease's TTL. The host's /readyz calls it (hostkit.Host.Ready).
func (c *Cluster) Ready(ctx context.Context) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return errors.New("cluster: closed")
	}
	if err := c.pool.Ping(ctx); err != nil {
		return fmt.Errorf("cluster: PostgreSQL does not answer: %v", redact(err))
	}
	if c.heldLeases() == 0 {
		return nil
	}
	if last := c.renew.ok.Load(); c.renew.failed.Load() && time.Since(time.Unix(0, last)) > c.ttl {
		return fmt.Errorf("cluster: the leases were not renewed for %s (TTL %s)", time.Since(time.Unix(0, last)).Round(time.Millisecond), c.ttl)
	}
	return nil
}

// countedClient is a Litestream replica client whose calls are counted
// (Metrics.ObjectStore): each call is one request or one listing of the
// object store, the cost an idle database keeps paying.
type countedClient struct {
	litestream.ReplicaClient
	m *metrics.Metrics
}

func counted(c litestream.ReplicaClient, m *metrics.Metrics) litestream.ReplicaClient {
	if m == nil {
		return c
	}
	return countedClient{c, m}
}

func (c countedClient) Init(ctx context.Context) error {
	err := c.ReplicaClient.Init(ctx)
	c.m.ObjectStore("init", err)
	return err
}

func (c countedClient) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	it, err := c.ReplicaClient.LTXFiles(ctx, level, seek, useMetadata)
	c.m.ObjectStore("list", err)
	return it, err
}

func (c countedClient) OpenLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, offset, size int64) (io.ReadCloser, error) {
	rc, err := c.ReplicaClient.OpenLTXFile(ctx, level, minTXID, maxTXID, offset, size)
	c.m.ObjectStore("get", err)
	return rc, err
}

func (c countedClient) WriteLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, r io.Reader) (*ltx.FileInfo, error) {
	fi, err := c.ReplicaClient.WriteLTXFile(ctx, level, minTXID, maxTXID, r)
	c.m.ObjectStore("put", err)
	return fi, err
}

func (c countedClient) DeleteLTXFiles(ctx context.Context, a []*ltx.FileInfo) error {
	err := c.ReplicaClient.DeleteLTXFiles(ctx, a)
	c.m.ObjectStore("delete", err)
	return err
}

func (c countedClient) DeleteAll(ctx context.Context) error {
	err := c.ReplicaClient.DeleteAll(ctx)
	c.m.ObjectStore("delete", err)
	return err
}

func (c countedClient) SetLogger(l *slog.Logger) { c.ReplicaClient.SetLogger(l) }
