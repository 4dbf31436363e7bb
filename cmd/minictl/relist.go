package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"minicp/embedetcd"
	"minicp/relist"
)

func newEtcdClient(endpoints []string) (*clientv3.Client, error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %s: %w", strings.Join(endpoints, ","), err)
	}
	return client, nil
}

func loadRESTConfig(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s (start minicp first, or pass --kubeconfig): %w", path, err)
	}
	return cfg, nil
}

// quietClientGo stops client-go's own logging: minictl prints what the
// informers do itself.
func quietClientGo() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}

func (a *app) relistCommand() *cobra.Command {
	sc := relist.StormConfig{}
	var compact bool
	cmd := &cobra.Command{
		Use:   "relist",
		Short: "a relist storm: K informers cut off while N objects are written",
		Long: `relist runs a relist storm against a running minicp: K informers on
ConfigMaps are cut off while N objects are written, then reconnect; it
prints what each one asked for (resumed watch, 410 Gone, relist) and what
the apiserver sent.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.relist(cmd.Context(), sc, compact)
		},
	}
	f := cmd.Flags()
	f.IntVar(&sc.Informers, "informers", 5, "informers to cut off together (K)")
	f.IntVar(&sc.Existing, "existing", 500, "ConfigMaps present before the informers start: what a relist sends again")
	f.IntVar(&sc.Objects, "objects", 100, "ConfigMaps written while the informers are away (N)")
	f.IntVar(&sc.ObjectBytes, "object-bytes", 1024, "bytes of data in each ConfigMap")
	f.StringVar(&sc.Namespace, "namespace", "default", "namespace of the ConfigMaps")
	f.DurationVar(&sc.Disconnect, "disconnect", 10*time.Second, "how long the informers stay cut off")
	f.BoolVar(&compact, "compact", false, "compact etcd (--etcd-endpoints, else the one in --data-dir) right after the writes, whatever --etcd-compaction-interval says")
	return cmd
}

// relist runs the storm and prints its report.
func (a *app) relist(ctx context.Context, sc relist.StormConfig, compact bool) error {
	out := a.out
	cfg, err := a.restConfig(ctx)
	if err != nil {
		return err
	}
	quietClientGo()
	if compact {
		eps, err := a.etcd()
		if err != nil {
			return err
		}
		if err := a.probeEtcd(ctx, eps); err != nil {
			return err
		}
		client, err := newEtcdClient(eps.urls)
		if err != nil {
			return err
		}
		defer client.Close()
		sc.AfterWrites = func(ctx context.Context, last int64) error {
			res, err := embedetcd.CompactKeep(ctx, client, 0)
			if err == nil {
				fmt.Fprintf(out, "compacted etcd to revision %d\n", res.Revision)
			}
			return err
		}
	}
	fmt.Fprintf(out, "%d informers on configmaps in %s, %d existing objects; cutting them off for %s while %d objects are written\n",
		sc.Informers, sc.Namespace, sc.Existing, sc.Disconnect, sc.Objects)
	report, err := relist.RunStorm(ctx, cfg, sc)
	if err != nil {
		return err
	}
	printStorm(out, report)
	return nil
}

func printStorm(out io.Writer, r relist.StormReport) {
	fmt.Fprintf(out, "cut off at resourceVersion %s, last write %s, reconnected after %s\n\n",
		r.CutAt, r.LastWrite, r.Disconnected.Round(time.Millisecond))
	fmt.Fprintf(out, "%-12s %-9s %s\n", "INFORMER", "RESYNC", "AFTER RECONNECT")
	for _, i := range r.Informers {
		fmt.Fprintf(out, "%-12s %-9s %s\n", i.Name, i.Resync.Round(time.Millisecond), describeCounts(i.Counts))
	}
	fmt.Fprintf(out, "\n%d of %d informers relisted; slowest resync %s\n", r.Relists(), len(r.Informers), r.MaxResync().Round(time.Millisecond))
	s := r.Server
	fmt.Fprintf(out, "apiserver sent: %.0f LIST (%s), %.0f watch-list, %.0f watch events (%s)\n",
		s.Lists, bytesString(int64(s.ListBytes)), s.WatchLists, s.WatchEvents, bytesString(int64(s.WatchBytes)))
}

// describeCounts says in words what an informer asked for.
func describeCounts(c relist.Counts) string {
	var parts []string
	if c.Expired > 0 {
		parts = append(parts, fmt.Sprintf("410 Gone x%d", c.Expired))
	}
	if c.WatchLists > 0 {
		parts = append(parts, fmt.Sprintf("relisted with %d watch-list", c.WatchLists))
	}
	if c.Lists > 0 {
		parts = append(parts, fmt.Sprintf("relisted with %d LIST", c.Lists))
	}
	if len(parts) == 0 {
		return "resumed its watch: only the missed events"
	}
	return strings.Join(parts, ", ")
}

func (a *app) informerCommand() *cobra.Command {
	var namespace string
	cmd := &cobra.Command{
		Use:   "informer",
		Short: "one informer on ConfigMaps, printing its requests, changes and store until Ctrl-C",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.informer(cmd.Context(), namespace)
		},
	}
	cmd.Flags().StringVar(&namespace, "namespace", "default", "namespace of the ConfigMaps to watch")
	return cmd
}

// informer runs `informer`: one informer on ConfigMaps, printing every
// request its reflector makes, every change it applies and what its store
// holds, until Ctrl-C.
func (a *app) informer(ctx context.Context, namespace string) error {
	out := a.out
	cfg, err := a.restConfig(ctx)
	if err != nil {
		return err
	}
	quietClientGo()
	p := &informerPrinter{out: out}
	inf, err := relist.NewInformer("informer", cfg, namespace, relist.InformerOptions{
		OnRequest:    func(r relist.Request) { p.line("%s", r) },
		OnWatchError: func(err error) { p.line("list/watch failed, retrying after client-go's backoff: %v", err) },
		Handler:      p,
	})
	if err != nil {
		return err
	}
	p.inf = inf
	inf.Start(ctx)
	defer inf.Stop()
	if err := inf.WaitSynced(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // Ctrl-C before the first sync
		}
		return err
	}
	p.printSynced()
	<-ctx.Done()
	return nil
}

// informerPrinter prints an informer's notifications, one line each with
// a timestamp, followed by the store once synced.
type informerPrinter struct {
	inf *relist.Informer
	// mu serialises lines from the reflector's and the handler's
	// goroutines, and guards the fields below.
	mu  sync.Mutex
	out io.Writer
	// synced is set once the "synced:" line is printed; store lines follow
	// changes only after it.
	synced bool
	// lastStore is the last store line printed, so that a relist's burst
	// of notifications prints the new store once.
	lastStore string
}

var _ cache.ResourceEventHandler = (*informerPrinter)(nil)

func (p *informerPrinter) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lineLocked(format, args...)
}

func (p *informerPrinter) lineLocked(format string, args ...any) {
	fmt.Fprintf(p.out, "%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// printSynced prints the store once the first full state has arrived.
func (p *informerPrinter) printSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.synced = true
	p.lastStore = p.store()
	p.lineLocked("synced: %s", p.lastStore)
}

// printStoreIfChanged prints the store after a change, once synced.
func (p *informerPrinter) printStoreIfChanged() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.store(); p.synced && s != p.lastStore {
		p.lastStore = s
		p.lineLocked("store: %s", s)
	}
}

// maxPrinted bounds the objects a store line lists.
const maxPrinted = 20

func (p *informerPrinter) store() string {
	c := p.inf.Contents()
	if len(c) > maxPrinted {
		return fmt.Sprintf("%d objects (last synced resourceVersion %s)", len(c), p.inf.LastSyncResourceVersion())
	}
	return fmt.Sprintf("%s (last synced resourceVersion %s)", relist.FormatContents(c), p.inf.LastSyncResourceVersion())
}

func (p *informerPrinter) event(kind string, obj any) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		p.line("%-8s %s rv=%s", kind, cm.Name, cm.ResourceVersion)
	} else {
		p.line("%-8s %v", kind, obj)
	}
	p.printStoreIfChanged()
}

func (p *informerPrinter) OnAdd(obj any, _ bool) { p.event("ADDED", obj) }
func (p *informerPrinter) OnDelete(obj any)      { p.event("DELETED", unwrapTombstone(obj)) }

// OnUpdate names an update that changes nothing "RELISTED": a relist
// delivers every object again, changed or not.
func (p *informerPrinter) OnUpdate(old, obj any) {
	o, okOld := old.(*corev1.ConfigMap)
	n, okNew := obj.(*corev1.ConfigMap)
	if okOld && okNew && o.ResourceVersion == n.ResourceVersion {
		p.event("RELISTED", obj)
		return
	}
	p.event("MODIFIED", obj)
}

func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
