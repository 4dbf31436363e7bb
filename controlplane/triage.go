package controlplane

// The triage pieces of the control plane (M3, M9, M10 and M15;
// docs/labs/08-triage.md, 09-read-consistency.md, 14-events-etcd.md):
//
//   - events on their own etcd (M10): --etcd-servers-overrides=/events#URL
//     as upstream, or --embedded-events-etcd for a second embedded member;
//   - fault injection (M9, M15): --enable-debug-faults serves /debug/faults
//     on loopback and puts the faults into admission and the etcd client;
//   - apiserver_storage_objects, counted every --etcd-count-metric-poll-period.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/apiserver"
	"minicp/apiserver/admission"
	"minicp/embedetcd"
	"minicp/faults"
	"minicp/internal/datadir"
	"minicp/registry"
	"minicp/ui"
	"slices"
)

// eventsPortOffset places the embedded events member's ports above the
// main ones: 2479 and 2480 beside 2379 and 2380.
const eventsPortOffset = 100

// TriageConfig configures fault injection, etcd overrides and the
// controllers the triage labs rely on.
type TriageConfig struct {
	// EnableDebugFaults serves the fault API at /debug/faults (loopback
	// clients only) and lets its faults into admission and the etcd client.
	EnableDebugFaults bool
	// EtcdServersOverrides stores resources in other etcd clusters, in
	// upstream's format: "group/resource#url;url", e.g. "/events#http://127.0.0.1:2479".
	EtcdServersOverrides []string
	// EmbeddedEventsEtcd starts a second embedded etcd member for events.
	EmbeddedEventsEtcd bool
	// ObjectCountPeriod is how often apiserver_storage_objects is counted
	// (upstream --etcd-count-metric-poll-period).
	ObjectCountPeriod time.Duration
}

// NewTriageConfig returns the defaults: no faults, every resource in the
// main etcd, objects counted every minute as upstream.
func NewTriageConfig() TriageConfig {
	return TriageConfig{ObjectCountPeriod: registry.DefaultObjectCountPeriod}
}

// AddFlags registers the triage flags.
func (c *TriageConfig) AddFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.EnableDebugFaults, "enable-debug-faults", c.EnableDebugFaults, "serve /debug/faults (loopback clients only) to inject latency or errors at admission and per etcd request kind; see minictl fault")
	fs.Func("etcd-servers-overrides", "per-resource etcd servers, comma-separated, each group/resource#servers with servers separated by ';', e.g. /events#http://127.0.0.1:2479", func(s string) error {
		c.EtcdServersOverrides = splitList(s)
		return nil
	})
	fs.BoolVar(&c.EmbeddedEventsEtcd, "embedded-events-etcd", c.EmbeddedEventsEtcd, "store events in a second embedded etcd member (client port = --etcd-client-port + 100), as --etcd-servers-overrides=/events#... does with an external one")
	fs.DurationVar(&c.ObjectCountPeriod, "etcd-count-metric-poll-period", c.ObjectCountPeriod, "how often apiserver_storage_objects is refreshed by counting each resource's keys; 0 disables it")
}

// Validate checks the configuration.
func (c *TriageConfig) Validate() error {
	var errs []error
	overrides, err := parseOverrides(c.EtcdServersOverrides)
	if err != nil {
		errs = append(errs, err)
	}
	if _, ok := overrides[eventsResource]; ok && c.EmbeddedEventsEtcd {
		errs = append(errs, errors.New("--embedded-events-etcd and an --etcd-servers-overrides entry for /events both place events: use one"))
	}
	if c.ObjectCountPeriod < 0 {
		errs = append(errs, fmt.Errorf("--etcd-count-metric-poll-period must not be negative, got %s", c.ObjectCountPeriod))
	}
	return errors.Join(errs...)
}

var eventsResource = schema.GroupResource{Resource: "events"}

// parseOverrides reads upstream's --etcd-servers-overrides entries.
func parseOverrides(entries []string) (map[schema.GroupResource][]string, error) {
	out := map[schema.GroupResource][]string{}
	var errs []error
	for _, entry := range entries {
		target, servers, ok := strings.Cut(entry, "#")
		group, resource, hasSlash := strings.Cut(target, "/")
		if !ok || !hasSlash || resource == "" || servers == "" {
			errs = append(errs, fmt.Errorf("--etcd-servers-overrides entry %q: want group/resource#servers, e.g. /events#http://127.0.0.1:2479", entry))
			continue
		}
		gr := schema.GroupResource{Group: group, Resource: resource}
		var urls []string
		for _, s := range strings.Split(servers, ";") {
			if u, err := url.Parse(s); err != nil || u.Host == "" {
				errs = append(errs, fmt.Errorf("--etcd-servers-overrides entry %q: %q is not a URL such as http://127.0.0.1:2479", entry, s))
				continue
			}
			urls = append(urls, s)
		}
		out[gr] = urls
	}
	return out, errors.Join(errs...)
}

// triage is what the triage pieces hold at run time.
type triage struct {
	faults     *faults.Set                               // nil without --enable-debug-faults
	eventsEtcd *embedetcd.Cluster                        // nil without --embedded-events-etcd
	clients    map[schema.GroupResource]*clientv3.Client // the override clusters' clients
	owned      []*clientv3.Client                        // clients opened for --etcd-servers-overrides, closed by closeTriage
	endpoints  map[schema.GroupResource][]string         // the override clusters' endpoints
	// compactors compact the override clusters every
	// --etcd-compaction-interval, as upstream runs one compactor per etcd
	// it talks to; closeTriage stops them before closing the clients.
	compactors []*registry.Compactor

	// cancel stops the object counter; wg waits for its goroutine.
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startTriage opens the override clusters (starting the embedded events
// member if asked) and the fault set; it runs before the registry exists.
func (cp *ControlPlane) startTriage(ctx context.Context) error {
	cfg := cp.cfg.Triage
	t := &triage{clients: map[schema.GroupResource]*clientv3.Client{}, endpoints: map[schema.GroupResource][]string{}}
	cp.triage = t
	if cfg.EnableDebugFaults {
		t.faults = faults.NewSet()
	}
	if cfg.EmbeddedEventsEtcd {
		events, err := embedetcd.Start(ctx, cp.cfg.eventsEtcd())
		if err != nil {
			return fmt.Errorf("starting the events etcd: %w", err)
		}
		t.eventsEtcd = events
		t.clients[eventsResource] = events.Client()
		t.endpoints[eventsResource] = events.Endpoints()
	}
	overrides, err := parseOverrides(cfg.EtcdServersOverrides)
	if err != nil {
		return err
	}
	for gr, urls := range overrides {
		c, err := clientv3.New(clientv3.Config{Endpoints: urls, DialTimeout: 5 * time.Second, Context: ctx, Logger: quietZap()})
		if err != nil {
			return fmt.Errorf("connecting to the etcd for %s at %v: %w", gr, urls, err)
		}
		t.owned = append(t.owned, c)
		t.clients[gr], t.endpoints[gr] = c, urls
	}
	for gr, c := range t.clients {
		t.compactors = append(t.compactors, registry.StartCompactor(c, cp.cfg.EtcdCompactionInterval, cp.logger.With("etcd", gr.String())))
	}
	if eps := t.endpoints[eventsResource]; len(eps) > 0 {
		return datadir.WriteEventsEtcdEndpoints(cp.cfg.DataDir, eps)
	}
	return nil
}

// eventsEtcd is the embedded events member's configuration: the main
// etcd's knobs, its own directory and name, ports 100 above the main ones.
func (c *Config) eventsEtcd() embedetcd.Config {
	etcd := c.embeddedEtcd()
	etcd.Name = "minicp-events-etcd"
	etcd.Members = 1
	etcd.DataDir = filepath.Join(c.DataDir, "etcd-events")
	if etcd.ClientPort != 0 {
		etcd.ClientPort += eventsPortOffset
	}
	if etcd.PeerPort != 0 {
		etcd.PeerPort += eventsPortOffset
	}
	return etcd
}

// storeOptions adds the overrides and the fault hook to the registry's options.
func (t *triage) storeOptions(opts registry.Options) registry.Options {
	if len(t.clients) > 0 {
		opts.EtcdOverrides = t.clients
	}
	if t.faults != nil {
		opts.Faults = t.faults
	}
	return opts
}

// registerAPI puts the faults into admission and serves their API, which
// can also stop and restart the embedded etcd's members.
func (t *triage) registerAPI(api *apiserver.Server, etcd *embedetcd.Cluster) {
	if t.faults == nil {
		return
	}
	if etcd != nil {
		t.faults.SetMembers(etcd)
	}
	api.AddAdmissionPlugin(faultsAdmission{t.faults})
	api.Handle("/debug/faults", t.faults.Handler())
}

// startObjectCounter counts the stored objects of every resource every
// --etcd-count-metric-poll-period, for apiserver_storage_objects.
func (cp *ControlPlane) startObjectCounter() {
	t := cp.triage
	period := cp.cfg.Triage.ObjectCountPeriod
	if period <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.wg.Add(1)
	// The counter's goroutine ends when stopObjectCounter cancels ctx.
	go func() {
		defer t.wg.Done()
		cp.store.RunObjectCounter(ctx, period)
	}()
}

// stopObjectCounter stops the counter and waits for it.
func (cp *ControlPlane) stopObjectCounter() {
	if cp.triage == nil || cp.triage.cancel == nil {
		return
	}
	cp.triage.cancel()
	cp.triage.wg.Wait()
}

// closeTriage stops the override clusters' compactors, then closes the
// override clients and the events etcd, after the main etcd's users have
// stopped.
func (cp *ControlPlane) closeTriage() error {
	if cp.triage == nil {
		return nil
	}
	var errs []error
	for _, c := range cp.triage.compactors {
		c.Stop()
	}
	for _, c := range cp.triage.owned {
		errs = append(errs, c.Close())
	}
	if cp.triage.eventsEtcd != nil {
		errs = append(errs, cp.triage.eventsEtcd.Close())
	}
	return errors.Join(errs...)
}

// EventsEtcdEndpoints are the client URLs of the etcd holding events when
// it is not the main one, nil otherwise.
func (cp *ControlPlane) EventsEtcdEndpoints() []string {
	if cp.triage == nil {
		return nil
	}
	return cp.triage.endpoints[eventsResource]
}

// EventsEtcdClient is a client of the etcd holding events when it is not
// the main one, nil otherwise.
func (cp *ControlPlane) EventsEtcdClient() *clientv3.Client {
	if cp.triage == nil {
		return nil
	}
	return cp.triage.clients[eventsResource]
}

// Faults is the fault set of --enable-debug-faults, nil without it.
func (cp *ControlPlane) Faults() *faults.Set {
	if cp.triage == nil {
		return nil
	}
	return cp.triage.faults
}

// otherClusters are the override clusters as the live page draws them:
// one axis each, named after what it holds (several resources sharing
// one etcd each get their own axis).
func (t *triage) otherClusters() []ui.OtherCluster {
	var out []ui.OtherCluster
	for gr, c := range t.clients {
		other := ui.OtherCluster{Name: gr.String(), Resources: []string{gr.String()}, Client: c}
		if gr == eventsResource {
			other.Cluster = t.eventsEtcd // nil with an external events etcd
		}
		out = append(out, other)
	}
	slices.SortFunc(out, func(a, b ui.OtherCluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// faultsAdmission is the admission plugin that applies the faults of the
// "admission" point, as a slow or failing webhook would.
type faultsAdmission struct{ set *faults.Set }

func (p faultsAdmission) Name() string { return faults.AdmissionPluginName }

func (p faultsAdmission) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.set.Admit(ctx, a.Resource.GroupVersionResource().GroupResource().String())
}
