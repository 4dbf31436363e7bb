//go:build linux

package robustness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// seen is one thing a watcher received: a LIST item or a watch event.
type seen struct {
	typ   string // ADDED, MODIFIED, DELETED, BOOKMARK
	state objState
}

// segment is what a raw watcher saw from one LIST to the next: the list at
// listRV, then every event of the watches it opened from there, each watch
// from the resourceVersion of the last event or BOOKMARK before it.
type segment struct {
	listRV int64
	list   []objState
	events []seen
}

// rawWatcher lists and watches the test namespace's ConfigMaps over plain
// HTTP, as a reflector does: LIST, then WATCH from the list's
// resourceVersion with bookmarks, re-WATCH from the last resourceVersion
// it saw when a stream ends, and LIST again only after 410 Gone.
type rawWatcher struct {
	name   string
	cfg    *rest.Config
	client *http.Client
	// lag, if not 0, is the longest pause before each re-watch: a slow
	// client, which compaction every second leaves behind (410, relist).
	lag time.Duration

	// mu guards the fields below: the watcher's goroutine appends, the
	// test reads.
	mu       sync.Mutex
	segments []segment
	position int64 // resourceVersion of the last event or BOOKMARK
	watches  int   // watch requests answered 200
	gone     int   // 410 answers (HTTP or ERROR event)
	errors   []string
}

// errGone is a 410: the watcher must list again.
var errGone = errors.New("410 Gone")

func newRawWatcher(name string, cfg *rest.Config, lag time.Duration) (*rawWatcher, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &rawWatcher{name: name, cfg: cfg, client: hc, lag: lag}, nil
}

// run lists and watches until ctx ends.
func (w *rawWatcher) run(ctx context.Context) {
	needList := true
	for ctx.Err() == nil {
		var err error
		if needList {
			err = w.list(ctx)
			needList = err != nil
		} else {
			if w.lag > 0 {
				wait(rand.N(w.lag))
			}
			err = w.watch(ctx)
			needList = errors.Is(err, errGone)
		}
		if err != nil && !needList && ctx.Err() == nil {
			// Connection refused while minicp restarts, a stream cut by
			// SIGKILL: try again shortly.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// wireObject holds the fields of a ConfigMap, a ConfigMapList or a Status
// that the checks need.
type wireObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data    map[string]string `json:"data"`
	Items   []wireObject      `json:"items"`
	Code    int32             `json:"code"`
	Message string            `json:"message"`
}

func (o wireObject) state() objState {
	rv, _ := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	return objState{name: o.Metadata.Name, rv: rv, value: o.Data[valueKey]}
}

func (w *rawWatcher) get(ctx context.Context, query url.Values) (*http.Response, error) {
	u := w.cfg.Host + "/api/v1/namespaces/" + testNamespace + "/configmaps?" + query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return w.client.Do(req)
}

// list starts a new segment with a consistent LIST (resourceVersion "").
func (w *rawWatcher) list(ctx context.Context) error {
	resp, err := w.get(ctx, url.Values{})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("LIST: %s: %s", resp.Status, body)
	}
	var list wireObject
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return fmt.Errorf("LIST: decoding: %w", err)
	}
	seg := segment{listRV: list.state().rv}
	for _, item := range list.Items {
		seg.list = append(seg.list, item.state())
	}
	w.mu.Lock()
	w.segments = append(w.segments, seg)
	w.position = seg.listRV
	w.mu.Unlock()
	return nil
}

// watch opens one watch from the current position and records its events
// until it ends; it returns errGone on a 410.
func (w *rawWatcher) watch(ctx context.Context) error {
	w.mu.Lock()
	from := w.position
	w.mu.Unlock()
	resp, err := w.get(ctx, url.Values{
		"watch":               {"1"},
		"resourceVersion":     {strconv.FormatInt(from, 10)},
		"allowWatchBookmarks": {"true"},
		// Streams end on their own now and then, so that re-watching from
		// the last resourceVersion is exercised too.
		"timeoutSeconds": {strconv.Itoa(2 + rand.IntN(8))},
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusGone {
		w.noteGone()
		return errGone
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("WATCH: %s: %s", resp.Status, body)
	}
	w.mu.Lock()
	w.watches++
	w.mu.Unlock()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string     `json:"type"`
			Object wireObject `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return err // io.EOF when the stream ends cleanly
		}
		if ev.Type == "ERROR" {
			if ev.Object.Code == http.StatusGone {
				w.noteGone()
				return errGone
			}
			w.noteError(fmt.Sprintf("ERROR event from %d: %d %s", from, ev.Object.Code, ev.Object.Message))
			return nil
		}
		w.mu.Lock()
		last := &w.segments[len(w.segments)-1]
		st := ev.Object.state()
		last.events = append(last.events, seen{typ: ev.Type, state: st})
		w.position = max(w.position, st.rv)
		w.mu.Unlock()
	}
}

func (w *rawWatcher) noteGone() {
	w.mu.Lock()
	w.gone++
	w.mu.Unlock()
}

func (w *rawWatcher) noteError(msg string) {
	w.mu.Lock()
	w.errors = append(w.errors, msg)
	w.mu.Unlock()
}

// at returns the watcher's position.
func (w *rawWatcher) at() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.position
}
