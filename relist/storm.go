package relist

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// StormConfig describes one relist storm.
type StormConfig struct {
	// Informers is K, the number of informers disconnected together.
	Informers int
	// Existing is how many ConfigMaps the namespace holds before the
	// informers start: what a relist has to send again.
	Existing int
	// Objects is N, the ConfigMaps written while the informers are away.
	Objects int
	// ObjectBytes is the size of each ConfigMap's data.
	ObjectBytes int
	// Namespace holds the storm's ConfigMaps; it must exist.
	Namespace string
	// Disconnect is how long the informers stay cut off, at least.
	Disconnect time.Duration
	// AfterWrites, if set, runs once the N writes are done, while the
	// informers are still away: e.g. compact etcd, or wait until the
	// apiserver's compactor has gone past lastRevision. The disconnect
	// lasts until it returns, and at least Disconnect.
	AfterWrites func(ctx context.Context, lastRevision int64) error
	// ResyncTimeout bounds the wait for every informer to catch up.
	ResyncTimeout time.Duration
	// Prefix names the storm's ConfigMaps (default "storm").
	Prefix string
	Logger *slog.Logger
}

// InformerResult is one informer's side of the storm.
type InformerResult struct {
	Name string
	// Requests made from the reconnect until the informer caught up.
	Counts Counts
	// Resync is the time from the reconnect until its store held every
	// object written while it was away, at the written resourceVersion.
	Resync time.Duration
}

// Relisted reports whether the informer fetched a full state again.
func (r InformerResult) Relisted() bool { return r.Counts.Relists() > 0 }

// StormReport is the outcome of RunStorm.
type StormReport struct {
	Config StormConfig
	// CutAt is the resourceVersion the informers had reached when cut
	// off; LastWrite the resourceVersion of the last write while away.
	CutAt, LastWrite string
	// Disconnected is how long the informers were cut off.
	Disconnected time.Duration
	Informers    []InformerResult
	// Server is the apiserver's side, from its /metrics, between the
	// reconnect and the end of the resync.
	Server ServerCost
}

// Relists counts the informers that relisted.
func (r StormReport) Relists() int {
	n := 0
	for _, i := range r.Informers {
		if i.Relisted() {
			n++
		}
	}
	return n
}

// MaxResync is the slowest informer's resync time.
func (r StormReport) MaxResync() time.Duration {
	var m time.Duration
	for _, i := range r.Informers {
		m = max(m, i.Resync)
	}
	return m
}

func (c *StormConfig) setDefaults() error {
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.Prefix == "" {
		c.Prefix = "storm"
	}
	if c.ResyncTimeout == 0 {
		c.ResyncTimeout = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Informers < 1 || c.Objects < 1 || c.Existing < 0 || c.ObjectBytes < 0 || c.Disconnect < 0 {
		return fmt.Errorf("a relist storm needs at least 1 informer and 1 object, and no negative sizes or durations (got %d informers, %d objects, %d existing, %d bytes, %s)",
			c.Informers, c.Objects, c.Existing, c.ObjectBytes, c.Disconnect)
	}
	return nil
}

// RunStorm runs one relist storm against the apiserver cfg points at
// (M6):
//
//  1. create Existing ConfigMaps, start K informers through a Link, wait
//     until all have synced and seen one more write on their watch;
//  2. cut the link: every informer loses its watch, and its attempt to
//     resume is held;
//  3. write N ConfigMaps, run AfterWrites, let Disconnect pass;
//  4. restore the link and time each informer until it holds the N
//     objects; count what it asked for (resumed watch, 410, relist) and
//     what the server sent (/metrics).
//
// Everything the storm started is stopped when it returns; the ConfigMaps
// it wrote stay.
func RunStorm(ctx context.Context, cfg *rest.Config, sc StormConfig) (StormReport, error) {
	if err := sc.setDefaults(); err != nil {
		return StormReport{}, err
	}
	report := StormReport{Config: sc}
	direct := rest.CopyConfig(cfg)
	direct.QPS = -1
	cs, err := kubernetes.NewForConfig(direct)
	if err != nil {
		return report, err
	}
	if err := writeConfigMaps(ctx, cs, sc, "existing", sc.Existing, nil); err != nil {
		return report, err
	}

	host, err := hostOf(cfg.Host)
	if err != nil {
		return report, err
	}
	link, err := NewLink(host, sc.Logger)
	if err != nil {
		return report, err
	}
	defer link.Close()
	informers, err := startInformers(ctx, cfg, link.URLFor(cfg.Host), sc)
	defer func() {
		for _, inf := range informers {
			inf.Stop()
		}
	}()
	if err != nil {
		return report, err
	}
	// One write every informer sees on its watch before the cut: client-go
	// treats a watch that ends within a second without an event as broken
	// and relists, whatever the history. Long-running informers have seen
	// events; so must these.
	warm := map[string]string{}
	if err := writeConfigMaps(ctx, cs, sc, "warmup", 1, warm); err != nil {
		return report, err
	}
	if _, err := waitResynced(ctx, informers, make([]Counts, len(informers)), warm, time.Now(), sc.ResyncTimeout); err != nil {
		return report, err
	}
	report.CutAt = lastResourceVersion(warm)

	link.Cut()
	cutAt := time.Now()
	written := map[string]string{}
	if err := writeConfigMaps(ctx, cs, sc, "away", sc.Objects, written); err != nil {
		return report, err
	}
	report.LastWrite = lastResourceVersion(written)
	if sc.AfterWrites != nil {
		rev, _ := parseRevision(report.LastWrite)
		if err := sc.AfterWrites(ctx, rev); err != nil {
			return report, fmt.Errorf("while the informers were away: %w", err)
		}
	}
	if err := sleepCtx(ctx, sc.Disconnect-time.Since(cutAt)); err != nil {
		return report, err
	}

	before := make([]Counts, len(informers))
	for i, inf := range informers {
		before[i] = inf.Counts()
	}
	metricsClient, err := rest.HTTPClientFor(direct)
	if err != nil {
		return report, err
	}
	costBefore, err := scrapeConfigMapCost(ctx, metricsClient, strings.TrimSuffix(cfg.Host, "/"))
	if err != nil {
		return report, err
	}
	link.Restore()
	restored := time.Now()
	report.Disconnected = restored.Sub(cutAt)
	report.Informers, err = waitResynced(ctx, informers, before, written, restored, sc.ResyncTimeout)
	if err != nil {
		return report, err
	}
	costAfter, err := scrapeConfigMapCost(ctx, metricsClient, strings.TrimSuffix(cfg.Host, "/"))
	if err != nil {
		return report, err
	}
	report.Server = costAfter.Sub(costBefore)
	return report, nil
}

// startInformers starts K informers through linkURL and waits until all
// have synced. The informers are returned even on error, to be stopped.
func startInformers(ctx context.Context, cfg *rest.Config, linkURL string, sc StormConfig) ([]*Informer, error) {
	viaLink := rest.CopyConfig(cfg)
	viaLink.Host = linkURL
	var out []*Informer
	for i := range sc.Informers {
		inf, err := NewInformer(fmt.Sprintf("informer-%d", i), viaLink, sc.Namespace, InformerOptions{})
		if err != nil {
			return out, err
		}
		inf.Start(ctx)
		out = append(out, inf)
	}
	ctx, cancel := context.WithTimeout(ctx, sc.ResyncTimeout)
	defer cancel()
	for _, inf := range out {
		if err := inf.WaitSynced(ctx); err != nil {
			return out, err
		}
	}
	return out, nil
}

// waitResynced polls every informer until it holds written, and records
// when each got there and what it asked for since the reconnect.
func waitResynced(ctx context.Context, informers []*Informer, before []Counts, written map[string]string, since time.Time, timeout time.Duration) ([]InformerResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results := make([]InformerResult, len(informers))
	pending := len(informers)
	err := waitFor(ctx, func() bool {
		for i, inf := range informers {
			if results[i].Name == "" && inf.Holds(written) {
				results[i] = InformerResult{Name: inf.Name, Resync: time.Since(since), Counts: inf.Counts().Sub(before[i])}
				pending--
			}
		}
		return pending == 0
	})
	if err != nil {
		return results, fmt.Errorf("%d of %d informers did not catch up within %s: %w", pending, len(informers), timeout, err)
	}
	return results, nil
}

// writeConfigMaps creates n ConfigMaps named <prefix>-<what>-<i>, or
// updates them if they exist, and records name -> resourceVersion.
func writeConfigMaps(ctx context.Context, cs *kubernetes.Clientset, sc StormConfig, what string, n int, written map[string]string) error {
	cms := cs.CoreV1().ConfigMaps(sc.Namespace)
	payload := strings.Repeat("x", sc.ObjectBytes)
	for i := range n {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", sc.Prefix, what, i)},
			Data:       map[string]string{"payload": payload, "written": time.Now().Format(time.RFC3339Nano)},
		}
		out, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			out, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("writing ConfigMap %s: %w", cm.Name, err)
		}
		if written != nil {
			written[out.Name] = out.ResourceVersion
		}
	}
	return nil
}

func lastResourceVersion(written map[string]string) string {
	var last int64
	for _, rv := range written {
		if r, err := parseRevision(rv); err == nil {
			last = max(last, r)
		}
	}
	return fmt.Sprint(last)
}

func parseRevision(rv string) (int64, error) {
	var r int64
	_, err := fmt.Sscan(rv, &r)
	return r, err
}

// hostOf returns host:port of an apiserver URL.
func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("apiserver URL %q has no host", raw)
	}
	return u.Host, nil
}

// sleepCtx waits d (nothing if d <= 0) or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
