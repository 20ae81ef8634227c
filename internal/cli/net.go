package cli

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/hostkit/netgate"
)

func newNetCmd(io *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "net",
		Short: "Inspect the governed network's decisions",
		Example: `  snuggen net check https://api.example.com/v1/items
  snuggen net check https://metadata.google.internal/ --resolve metadata.google.internal=169.254.169.254`,
	}
	return group(c, newNetCheckCmd(io))
}

// netCheckOptions are the flags of "snuggen net check".
type netCheckOptions struct {
	url     string
	method  string
	resolve []string
	config  string
}

func newNetCheckCmd(io *IO) *cobra.Command {
	o := &netCheckOptions{}
	c := &cobra.Command{
		Use:   "check URL",
		Short: "Decide whether the host would send a net request, without sending it",
		Long: `check runs the governed network's decision path for one URL without sending
anything: URL canonicalization, the scheme, the operator's deny list, name
resolution and the SSRF address tables, and the connection match (on an
origin with a path-scoped connection, a path servers read in more than one
way, such as /v1/..%2Fadmin or /v1/..;/admin, is NET_INVALID_REQUEST). It
prints one JSON line:

  {"allow":true,"address":"93.184.216.34:443","url":"https://example.com/"}
  {"allow":false,"code":"NET_SSRF_BLOCKED","reason":"127.0.0.1 is loopback (127.0.0.0/8)"}

and exits 0 when the request would be allowed, 1 when it would be refused.
With --resolve, names resolve only through the given pairs (like curl's
--resolve) and a name without a pair is NET_FETCH_FAILED; without it the
system resolver answers. Numeric hosts are never resolved. Unlike a request
from an app, which asks the user before any name is looked up, check looks
the name up at once: it is the operator's tool.`,
		Example: `  snuggen net check https://2130706433/
  snuggen net check https://api.example.com/ --resolve api.example.com=93.184.216.34
  snuggen net check https://mixed.example/ --resolve mixed.example=93.184.216.34,10.0.0.1
  snuggen net check https://api.github.com/user --config net.json --method POST`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.url = args[0]
			return runNetCheck(cmd.Context(), io, o)
		},
	}
	c.Flags().StringVar(&o.method, "method", "GET", "request method (GET, HEAD, POST, PUT, PATCH, DELETE)")
	c.Flags().StringArrayVar(&o.resolve, "resolve", nil, "answer a name with an address: NAME=IP[,IP...] (repeatable)")
	c.Flags().StringVar(&o.config, "config", "", "the operator's net config (JSON: connections, deny, devHttpHosts, rate)")
	return c
}

func runNetCheck(ctx context.Context, io *IO, o *netCheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var cfg netgate.Config
	if o.config != "" {
		var err error
		if cfg, err = netgate.LoadConfig(o.config); err != nil {
			return &ExitError{Code: exitUsage, Err: err}
		}
	}
	var opts []netgate.Option
	if len(o.resolve) > 0 {
		res := netgate.StaticResolver{}
		for _, p := range o.resolve {
			if err := res.ParseResolve(p); err != nil {
				return usageError("%v", err)
			}
		}
		opts = append(opts, netgate.WithResolver(res))
	}
	g, err := netgate.New(cfg, opts...)
	if err != nil {
		return &ExitError{Code: exitUsage, Err: err}
	}
	defer g.Close()
	res := g.Check(ctx, netgate.App{}, o.method, o.url)
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if _, err := io.Out.Write(append(b, '\n')); err != nil {
		return err
	}
	if !res.Allow {
		return silentExit(exitFailure)
	}
	return nil
}
