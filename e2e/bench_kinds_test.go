package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// storedBytes reads every key under prefix from the process's etcd and
// returns how many there are and the mean size of their values: what an
// object costs in etcd, in its storage encoding.
func storedBytes(b testing.TB, ctx context.Context, p *minicpProcess, prefix string) (int, float64) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{p.etcdURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) == 0 {
		b.Fatalf("etcd get %s: %d keys, %v", prefix, len(resp.Kvs), err)
	}
	var total int
	for _, kv := range resp.Kvs {
		total += len(kv.Value)
	}
	return len(resp.Kvs), float64(total) / float64(len(resp.Kvs))
}

// benchKind is a kind the HTTP benchmarks create, list and watch in the
// "default" namespace of a minicp process: pods, ConfigMaps (built-in,
// protobuf in etcd) or a custom resource (JSON in etcd, served as JSON
// only), so that one benchmark can measure them side by side.
type benchKind struct {
	name string
	// resource is the resource as /debug/watchcache names it.
	resource string
	// path is the collection in "default", from the server's root.
	path string
	// key is the etcd prefix of its objects in "default".
	key string
	// body is the JSON of object i, named name.
	body func(name string, i int) string
	// install readies the kind in a fresh minicp (nil: built in).
	install func(b testing.TB, ctx context.Context, p *minicpProcess)
}

// Media types a benchmark lists and watches with.
const (
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	mediaJSON     = "application/json"
)

// podsKind: pod i is bound to node-(i%100), for node-scoped lists.
var podsKind = benchKind{
	name: "pods", resource: "pods", path: "/api/v1/namespaces/default/pods", key: "/registry/pods/default/",
	body: func(name string, i int) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"app":"web"}},"spec":{"nodeName":"node-%d","containers":[{"name":"c","image":"nginx:1.27"}]}}`, name, i%100)
	},
}

// configMapsKind and widgetsKind carry the same data: one label and four
// short strings, in a ConfigMap's data or a Widget's spec.
var configMapsKind = benchKind{
	name: "configmaps", resource: "configmaps", path: "/api/v1/namespaces/default/configmaps", key: "/registry/configmaps/default/",
	body: func(name string, i int) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"web"}},"data":%s}`, name, benchData(i))
	},
}

var widgetsKind = benchKind{
	name: "widgets", resource: "widgets.bench.example.com", path: "/apis/bench.example.com/v1/namespaces/default/widgets",
	key: "/registry/bench.example.com/widgets/default/",
	body: func(name string, i int) string {
		return fmt.Sprintf(`{"apiVersion":"bench.example.com/v1","kind":"Widget","metadata":{"name":%q,"labels":{"app":"web"}},"spec":%s}`, name, benchData(i))
	},
	install: func(b testing.TB, ctx context.Context, p *minicpProcess) {
		installBenchCRD(b, ctx, p, "widgets", "bench.example.com", "Widget")
	},
}

func benchData(i int) string {
	return fmt.Sprintf(`{"color":"blue-%d","size":"large","owner":"team-%d","note":"created by the benchmark"}`, i, i%10)
}

// benchCRD is a namespaced CRD with a structural schema of four string
// fields under spec, so that every create is validated, pruned and
// defaulted as a custom resource with a schema is.
const benchCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%[1]s.%[2]s"},
"spec":{"group":"%[2]s","scope":"Namespaced","names":{"plural":"%[1]s","singular":"%[4]s","kind":"%[3]s"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
"spec":{"type":"object","properties":{"color":{"type":"string"},"size":{"type":"string","default":"small"},"owner":{"type":"string"},"note":{"type":"string"}}}}}}}]}}`

// installBenchCRD creates a CRD for plural.group and returns when an
// object of it has been created (and deleted again).
func installBenchCRD(b testing.TB, ctx context.Context, p *minicpProcess, plural, group, kind string) {
	client := p.client(nil)
	crd := fmt.Sprintf(benchCRD, plural, group, kind, strings.ToLower(kind))
	if code, body := send(ctx, client, http.MethodPost, p.url+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); code != http.StatusCreated {
		b.Fatalf("create CRD %s.%s: %d %s", plural, group, code, body)
	}
	path := fmt.Sprintf("%s/apis/%s/v1/namespaces/default/%s", p.url, group, plural)
	probe := fmt.Sprintf(`{"apiVersion":"%s/v1","kind":%q,"metadata":{"name":"probe"}}`, group, kind)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := send(ctx, client, http.MethodPost, path, probe)
		if code == http.StatusCreated {
			break
		}
		if code != http.StatusNotFound || time.Now().After(deadline) {
			b.Fatalf("first create of a %s: %d %s", kind, code, body)
		}
		time.Sleep(2 * time.Millisecond) // poll: the CRD is not served yet
	}
	if code, body := send(ctx, client, http.MethodDelete, path+"/probe", ""); code != http.StatusOK {
		b.Fatalf("delete the probe %s: %d %s", kind, code, body)
	}
}

// send makes one JSON request and returns its status code and body (code
// 0 and the error's text when there was no response).
func send(ctx context.Context, client *http.Client, method, url, body string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", mediaJSON)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(data)
}

// createOverHTTP creates objects prefix-from .. prefix-(to-1) of kind
// with 8 writers, and returns how long it took and each create's latency.
func createOverHTTP(b testing.TB, ctx context.Context, p *minicpProcess, kind benchKind, prefix string, from, to int) (time.Duration, []time.Duration) {
	const writers = 8
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex // guards latencies
		latencies []time.Duration
	)
	errs := make(chan error, writers)
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() { // one writer: every 8th object
			defer wg.Done()
			client := p.client(nil)
			var mine []time.Duration
			defer func() { mu.Lock(); latencies = append(latencies, mine...); mu.Unlock() }()
			for i := from + w; i < to; i += writers {
				name := fmt.Sprintf("%s-%05d", prefix, i)
				began := time.Now()
				if code, body := send(ctx, client, http.MethodPost, p.url+kind.path, kind.body(name, i)); code != http.StatusCreated {
					errs <- fmt.Errorf("create %s %s: %d %s", kind.name, name, code, body)
					return
				}
				mine = append(mine, time.Since(began))
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return took, latencies
}

// getAll makes one GET of path with the Accept header accept, reads the
// body in full and returns how long it took and how many bytes came.
func getAll(b testing.TB, client *http.Client, url, accept string) (time.Duration, int64) {
	start := time.Now()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return time.Since(start), n
}

// median of durations (0 for none); the slice is sorted in place.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// medianFloat is the median of xs (0 for none); xs is sorted in place.
func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// ms is d in milliseconds, for ReportMetric.
func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// rotated returns the cases of round r in the order they run: each round
// starts one case later than the one before, so that no case is always
// first (or always right after another) on a machine whose load changes.
func rotated[T any](cases []T, r int) []T {
	k := r % len(cases)
	return append(slices.Clone(cases[k:]), cases[:k]...)
}
