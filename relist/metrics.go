package relist

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ServerCost is what the apiserver's /metrics say about ConfigMap reads
// in one namespace-scoped or cluster-scoped series, summed: the server's
// side of a relist storm.
type ServerCost struct {
	// Lists and ListBytes: LIST requests answered and the bytes of their
	// responses (apiserver_response_sizes).
	Lists     float64
	ListBytes float64
	// WatchLists: streaming LISTs whose initial state was delivered
	// (apiserver_watch_list_duration_seconds).
	WatchLists float64
	// WatchEvents and WatchBytes: events sent on watch streams, initial
	// states included, and their bytes (apiserver_watch_events_sizes).
	WatchEvents float64
	WatchBytes  float64
}

// Sub returns c - o, field by field.
func (c ServerCost) Sub(o ServerCost) ServerCost {
	return ServerCost{
		Lists: c.Lists - o.Lists, ListBytes: c.ListBytes - o.ListBytes,
		WatchLists:  c.WatchLists - o.WatchLists,
		WatchEvents: c.WatchEvents - o.WatchEvents, WatchBytes: c.WatchBytes - o.WatchBytes,
	}
}

// scrapeConfigMapCost reads the apiserver's /metrics and sums the series
// of core/v1 configmaps.
func scrapeConfigMapCost(ctx context.Context, client *http.Client, baseURL string) (ServerCost, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return ServerCost{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return ServerCost{}, fmt.Errorf("reading %s/metrics: %w", baseURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ServerCost{}, fmt.Errorf("reading %s/metrics: %s", baseURL, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return ServerCost{}, fmt.Errorf("parsing %s/metrics: %w", baseURL, err)
	}
	var c ServerCost
	for _, m := range configMapSeries(families["apiserver_response_sizes"], "LIST") {
		c.Lists += float64(m.GetHistogram().GetSampleCount())
		c.ListBytes += m.GetHistogram().GetSampleSum()
	}
	for _, m := range configMapSeries(families["apiserver_watch_list_duration_seconds"], "") {
		c.WatchLists += float64(m.GetHistogram().GetSampleCount())
	}
	for _, m := range configMapSeries(families["apiserver_watch_events_sizes"], "") {
		c.WatchEvents += float64(m.GetHistogram().GetSampleCount())
		c.WatchBytes += m.GetHistogram().GetSampleSum()
	}
	return c, nil
}

// configMapSeries returns the series of family labelled group "",
// resource configmaps and, if verb is set, that verb.
func configMapSeries(family *dto.MetricFamily, verb string) []*dto.Metric {
	if family == nil {
		return nil
	}
	var out []*dto.Metric
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["group"] == "" && labels["resource"] == "configmaps" && (verb == "" || labels["verb"] == verb) {
			out = append(out, m)
		}
	}
	return out
}
