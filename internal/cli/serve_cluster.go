//go:build cluster

package cli

import (
	"context"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/cluster"
	"github.com/snuggen/snuggen/hostkit/store"
)

// This file is in builds with the cluster tag only: replicated mode's
// dependencies (pgx, Litestream and the AWS SDK) add about 30 MB and a few
// milliseconds of package initialisation to every process, which the
// default build (snuggen build, snuggen version) does not pay.
func init() {
	openCluster = func(ctx context.Context, o *serveOptions, dataDir string, logf func(string, ...any)) (hostkit.Cluster, error) {
		return cluster.Open(ctx, cluster.Config{
			Postgres:    o.postgres,
			ObjectStore: o.objectStore,
			DataDir:     dataDir,
			Addr:        o.clusterAddr,
			Advertise:   o.advertise,
			LeaseTTL:    o.leaseTTL,
			IdleRelease: o.idleRelease,
			StagingDir:  o.staging,
			Secrets:     o.clusterSecrets,
			Store:       store.Options{StatementTimeout: o.dbLimit},
			Logf:        logf,
			Metrics:     o.metrics,
		})
	}
}
