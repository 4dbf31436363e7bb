package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// watchObjects streams the events of a registry watch to the client as a
// chunked HTTP response, one frame per event, flushed at once:
//
//   - JSON: one metav1.WatchEvent per line, Content-Type application/json;
//   - protobuf: each WatchEvent length-prefixed (4 bytes, big endian),
//     Content-Type application/vnd.kubernetes.protobuf;stream=watch.
//
// The stream ends cleanly (a complete chunked response) when timeoutSeconds
// pass (minRequestTimeout when absent or 0; at once when negative, as
// upstream, whose watch timer fires at once for a negative duration), when the registry closes the watch,
// when the client goes away (its request context ends), or when the server
// shuts down. In every case the registry watch is stopped before the
// handler returns.
func (s *Server) watchObjects(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	start := time.Now()
	out, err := negotiateOutput(req, targetWatch)
	if err != nil {
		return err
	}
	opts, timeout, err := listOptions(req, info)
	if err != nil {
		return err
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("the response writer cannot stream"))
	}
	if s.stopping.Err() != nil {
		return apierrors.NewServiceUnavailable("the apiserver is shutting down; retry against a running server")
	}
	// The watch ends with the request or with the server (shutdown.go),
	// even while the registry is still setting it up.
	ctx, cancel := s.untilShutdown(req.Context())
	defer cancel()
	watcher, err := s.store.Watch(ctx, res, info.namespace, opts)
	if err != nil {
		return err
	}
	defer watcher.Stop()
	s.openWatches.Add(1)
	defer s.openWatches.Add(-1)

	enc := newWatchEncoder(req, res, out)
	writeHeader(w, enc.contentType, http.StatusOK)
	flusher.Flush() // the client sees 200 before the first event
	// A negative timeoutSeconds fires at once: the stream ends right after
	// its 200, as upstream's does.
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-timer.C: // timeoutSeconds passed
			return nil
		case <-ctx.Done(): // the client went away, or Shutdown
			return nil
		case event, ok := <-watcher.ResultChan():
			if !ok {
				return nil
			}
			counted := &countingWriter{w: w}
			if err := enc.encode(counted, event); err != nil {
				// The client is gone or the event cannot be encoded; the
				// status line is sent, so the stream just ends here.
				s.log.Debug("watch stream ended", "path", req.URL.Path, "err", err)
				return nil
			}
			if len(watcher.ResultChan()) == 0 {
				flusher.Flush() // unless more events wait: then they go out together
			}
			gv := res.GroupVersion
			s.metrics.observeWatchEvent(gv.Group, gv.Version, res.Name, counted.n)
			if isInitialEventsEnd(event) {
				s.metrics.observeWatchList(gv.Group, gv.Version, res.Name, info.metricScope(), time.Since(start))
			}
		}
	}
}

// watchEncoder frames watch events. Each event's object is encoded on its
// own (the "embedded" encoder, after any Table or PartialObjectMetadata
// transform) and wrapped in a metav1.WatchEvent, which the stream
// serializer encodes and the framer delimits.
type watchEncoder struct {
	req         *http.Request
	res         *registry.Resource
	out         output
	contentType string
	streaming   runtime.Encoder // encodes WatchEvent frames
	tableOpts   metav1.TableOptions
	// sentColumns is set once a Table with column definitions has been
	// sent; later Tables omit them, as upstream's do.
	sentColumns bool
	// frameIDs name the shared encodings of this watch's frames, one per
	// event type, built once per watch rather than once per event.
	frameIDs map[watch.EventType]runtime.Identifier
}

// frameID names the encoding of a frame of type t in the cache of a shared
// event: the media type, group version and event type decide its bytes.
func (e *watchEncoder) frameID(t watch.EventType) runtime.Identifier {
	id, ok := e.frameIDs[t]
	if !ok {
		if e.frameIDs == nil {
			e.frameIDs = map[watch.EventType]runtime.Identifier{}
		}
		id = runtime.Identifier(fmt.Sprintf("watch-event;%s;%s;%s", e.contentType, e.res.GroupVersion, t))
		e.frameIDs[t] = id
	}
	return id
}

func newWatchEncoder(req *http.Request, res *registry.Resource, out output) *watchEncoder {
	contentType := out.info.MediaType
	if contentType != runtime.ContentTypeJSON {
		contentType += ";stream=watch"
	}
	enc := &watchEncoder{
		req:         req,
		res:         res,
		out:         out,
		contentType: contentType,
		streaming:   registry.Codecs.EncoderForVersion(out.info.StreamSerializer.Serializer, frameVersion(res)),
	}
	if out.as == asTable {
		// Already validated when the options were read; a bad value
		// surfaces as an encoding error on the first event.
		enc.tableOpts, _ = tableOptions(req)
	}
	return enc
}

// frameVersion is the group version watch frames (metav1.WatchEvent) are
// encoded in: the resource's own, where the scheme registers WatchEvent
// for every built-in group; the core "v1" for custom resources, whose
// groups the scheme does not know. A frame has no apiVersion of its own:
// the bytes are the same.
func frameVersion(res *registry.Resource) schema.GroupVersion {
	if res.TextOnly {
		return schema.GroupVersion{Version: "v1"}
	}
	return res.GroupVersion
}

// countingWriter counts the bytes of one watch frame.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// isInitialEventsEnd reports whether event is the BOOKMARK that ends the
// initial state of a watch-list request (annotated
// k8s.io/initial-events-end: "true").
func isInitialEventsEnd(event watch.Event) bool {
	if event.Type != watch.Bookmark {
		return false
	}
	obj := event.Object
	if co, ok := obj.(runtime.CacheableObject); ok {
		obj = co.GetObject()
	}
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// encode writes one event as one frame.
func (e *watchEncoder) encode(w io.Writer, event watch.Event) error {
	framed := e.out.info.StreamSerializer.Framer.NewFrameWriter(w)
	if co, ok := event.Object.(runtime.CacheableObject); ok && e.out.as == "" {
		// A watch cache event, shared by every watcher: the whole frame is
		// encoded once per media type and event type, then only copied
		// (upstream's watchEncoder does the same).
		return co.CacheEncode(e.frameID(event.Type), func(obj runtime.Object, out io.Writer) error {
			return e.encodeFrame(out, watch.Event{Type: event.Type, Object: obj})
		}, framed)
	}
	return e.encodeFrame(framed, event)
}

// encodeFrame writes one WatchEvent, its object encoded on its own.
func (e *watchEncoder) encodeFrame(w io.Writer, event watch.Event) error {
	obj, gv, err := e.transform(event)
	if err != nil {
		return err
	}
	var embedded bytes.Buffer
	if err := encoderFor(e.out.info.Serializer, gv, obj).Encode(obj, &embedded); err != nil {
		return err
	}
	frame := &metav1.WatchEvent{Type: string(event.Type), Object: runtime.RawExtension{Raw: embedded.Bytes()}}
	return streaming.NewEncoder(w, e.streaming).Encode(frame)
}

// transform gives an event's object the form the client asked for. ERROR
// events carry a Status, which is never transformed.
func (e *watchEncoder) transform(event watch.Event) (runtime.Object, schema.GroupVersion, error) {
	if _, isStatus := event.Object.(*metav1.Status); isStatus || e.out.as == "" {
		// A watch cache event's object is a runtime.CacheableObject shared
		// by every watcher: the encoder encodes it once per media type.
		return event.Object, e.res.GroupVersion, nil
	}
	if co, ok := event.Object.(runtime.CacheableObject); ok {
		event.Object = co.GetObject() // a private copy to build a Table or metadata from
	}
	if e.out.as != asTable {
		partial, err := asPartial(event.Object)
		return partial, metav1.SchemeGroupVersion, err
	}
	if event.Type == watch.Bookmark {
		// A bookmark only carries a resourceVersion; it is not a row.
		m, err := meta.Accessor(event.Object)
		if err != nil {
			return nil, metav1.SchemeGroupVersion, err
		}
		table := &metav1.Table{ListMeta: metav1.ListMeta{ResourceVersion: m.GetResourceVersion()}}
		return table, metav1.SchemeGroupVersion, nil
	}
	table, err := toTable(event.Object, e.res, e.tableOpts)
	if err != nil {
		return nil, metav1.SchemeGroupVersion, err
	}
	if e.sentColumns {
		table.ColumnDefinitions = nil
	}
	e.sentColumns = true
	return table, metav1.SchemeGroupVersion, nil
}
