package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkList10000PodsOverHTTP is the LIST comparison as a client sees
// it: 10,000 pods on 100 nodes, listed through the apiserver in protobuf
// (as controllers list), from a minicp process with the watch cache and
// then, on the same data, from one without it (every list a range read of
// etcd). The apiserver's encoding is in every figure; the storage-level
// comparison is watchcache's BenchmarkList10000Pods.
//
//	go test -run XXX -bench BenchmarkList10000PodsOverHTTP -count 5 -timeout 30m ./e2e/
func BenchmarkList10000PodsOverHTTP(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin, dir := buildMinicp(b), b.TempDir()
	cached := startMinicpProcessIn(b, ctx, bin, dir)
	createPodsOverHTTP(b, ctx, cached, 10000, 100)
	all, node := "/api/v1/pods", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-7"
	for _, bc := range []struct{ name, path string }{
		{"all/cache-RV0", all + "?resourceVersion=0"},
		{"all/cache-consistent", all},
		{"node/cache-RV0-index", node + "&resourceVersion=0"},
		{"node/cache-consistent-index", node},
	} {
		b.Run(bc.name, func(b *testing.B) { benchmarkGet(b, cached, bc.path) })
	}
	cached.stop(b)
	uncached := startMinicpProcessIn(b, ctx, bin, dir, "--watch-cache=false")
	defer uncached.stop(b)
	for _, bc := range []struct{ name, path string }{
		{"all/etcd", all},
		{"node/etcd", node},
	} {
		b.Run(bc.name, func(b *testing.B) { benchmarkGet(b, uncached, bc.path) })
	}
}

// benchmarkGet times one protobuf GET per iteration, body read in full.
func benchmarkGet(b *testing.B, p *minicpProcess, path string) {
	client, url := p.client(nil), p.url+path
	for b.Loop() {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
		}
		b.SetBytes(n)
	}
}

// createPodsOverHTTP creates n pods in "default" on nodes node-0..,
// with 8 writers.
func createPodsOverHTTP(b *testing.B, ctx context.Context, p *minicpProcess, n, nodes int) {
	url := p.url
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() { // one writer: every 8th pod
			defer wg.Done()
			client := p.client(nil)
			for i := w; i < n; i += writers {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%05d","labels":{"app":"web"}},"spec":{"nodeName":"node-%d","containers":[{"name":"c","image":"nginx:1.27"}]}}`, i, i%nodes)
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/namespaces/default/pods", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusCreated {
					errs <- fmt.Errorf("create pod-%05d: %d %v", i, resp.StatusCode, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
