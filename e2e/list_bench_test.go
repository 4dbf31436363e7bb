package e2e

import (
	"context"
	"strings"
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
	createOverHTTP(b, ctx, cached, podsKind, "pod", 0, 10000)
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
	client := p.client(nil)
	for b.Loop() {
		_, n := getAll(b, client, p.url+path, mediaProtobuf)
		b.SetBytes(n)
	}
}

// BenchmarkCustomResourceVsConfigMapOverHTTP measures a custom resource
// (JSON in etcd, served as JSON only, every write validated against its
// schema) beside ConfigMaps carrying the same data (protobuf in etcd), in
// one minicp process, case after case in rotating order:
//
//   - creates: 10,000 of each, in alternating batches of 1,000 with 8
//     writers; creates/s per batch and the latency of each create; then
//     the mean size of a stored object, read from etcd;
//   - LIST of the 10,000, one GET per case and round: from the watch cache
//     (resourceVersion=0) and from etcd (resourceVersionMatch=Exact at the
//     current revision, which the cache always passes to etcd), ConfigMaps
//     in protobuf and in JSON, Widgets in JSON.
//
// Ratios are per batch or round (Widget over ConfigMap), then the median.
//
//	go test -run XXX -bench BenchmarkCustomResourceVsConfigMapOverHTTP -benchtime 10x -count 3 -timeout 60m ./e2e/
func BenchmarkCustomResourceVsConfigMapOverHTTP(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	p := startMinicpProcess(b, ctx, buildMinicp(b))
	defer p.stop(b)
	widgetsKind.install(b, ctx, p)
	creates := compareCreates(b, ctx, p, 10000, 1000)
	stored := map[string]float64{}
	for _, k := range []benchKind{configMapsKind, widgetsKind} {
		_, stored[k.name] = storedBytes(b, ctx, p, k.key)
	}

	client := p.client(nil)
	rv := p.collectionRV(b, client, configMapsKind.path)
	type listCase struct {
		name, query, accept string
		kind                benchKind
	}
	var cases []listCase
	for _, from := range []struct{ name, query string }{{"cache", "?resourceVersion=0"}, {"etcd", "?resourceVersionMatch=Exact&resourceVersion=" + rv}} {
		cases = append(cases,
			listCase{"configmaps-protobuf/" + from.name, from.query, mediaProtobuf, configMapsKind},
			listCase{"configmaps-json/" + from.name, from.query, mediaJSON, configMapsKind},
			listCase{"widgets-json/" + from.name, from.query, mediaJSON, widgetsKind})
	}
	took, size := map[string][]time.Duration{}, map[string]int64{}
	round := 0
	for b.Loop() {
		for _, c := range rotated(cases, round) {
			d, n := getAll(b, client, p.url+c.kind.path+c.query, c.accept)
			took[c.name], size[c.name] = append(took[c.name], d), n
		}
		round++
	}
	reportCreates(b, creates) // after b.Loop, which drops the metrics reported before it
	for k, size := range stored {
		b.ReportMetric(size, "etcd-bytes/"+k)
	}
	for _, from := range []string{"cache", "etcd"} {
		cmProto, cmJSON, widgets := took["configmaps-protobuf/"+from], took["configmaps-json/"+from], took["widgets-json/"+from]
		b.ReportMetric(medianFloat(ratios(widgets, cmProto)), "list-"+from+"-widgets/cm-protobuf")
		b.ReportMetric(medianFloat(ratios(widgets, cmJSON)), "list-"+from+"-widgets/cm-json")
	}
	for _, c := range cases {
		b.ReportMetric(ms(median(took[c.name])), "list-"+strings.ReplaceAll(c.name, "/", "-")+"-ms")
		b.Logf("%s: %d bytes", c.name, size[c.name])
	}
}

// createComparison is what compareCreates measured, per batch.
type createComparison struct {
	perSecond map[string][]float64       // kind -> creates/s of each batch
	latencies map[string][]time.Duration // kind -> every create's latency
	ratios    []float64                  // per pair of batches: Widgets/s over ConfigMaps/s
}

// compareCreates creates n ConfigMaps and n Widgets in alternating
// batches (the first kind of each pair alternating too).
func compareCreates(b *testing.B, ctx context.Context, p *minicpProcess, n, batch int) createComparison {
	c := createComparison{perSecond: map[string][]float64{}, latencies: map[string][]time.Duration{}}
	kinds := []benchKind{configMapsKind, widgetsKind}
	for round, from := 0, 0; from < n; round, from = round+1, from+batch {
		rate := map[string]float64{}
		for _, k := range rotated(kinds, round) {
			took, lat := createOverHTTP(b, ctx, p, k, "obj", from, min(from+batch, n))
			rate[k.name] = float64(len(lat)) / took.Seconds()
			c.perSecond[k.name] = append(c.perSecond[k.name], rate[k.name])
			c.latencies[k.name] = append(c.latencies[k.name], lat...)
		}
		c.ratios = append(c.ratios, rate[widgetsKind.name]/rate[configMapsKind.name])
	}
	return c
}

func reportCreates(b *testing.B, c createComparison) {
	for _, k := range []string{configMapsKind.name, widgetsKind.name} {
		lat := c.latencies[k]
		median(lat) // sorts
		b.ReportMetric(medianFloat(c.perSecond[k]), "create-"+k+"/s")
		b.ReportMetric(ms(lat[len(lat)/2]), "create-"+k+"-p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "create-"+k+"-p99-ms")
		b.Logf("creates/s of %s, batches sorted: %.0f", k, c.perSecond[k])
	}
	b.ReportMetric(medianFloat(c.ratios), "create-widgets/cm")
	b.Logf("creates/s, widgets over configmaps, pairs of batches sorted: %.2f", c.ratios)
}

// ratios is a[i]/b[i] for each round i.
func ratios(a, b []time.Duration) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i].Seconds() / b[i].Seconds()
	}
	return out
}
