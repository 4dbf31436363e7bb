// Package watchcache is minicp's watch cache: for each resource, one LIST
// and one WATCH against etcd keep an in-memory copy of every object and a
// window of the most recent changes, and every client LIST, GET and WATCH
// that the resourceVersion rules allow is answered from that memory instead
// of from etcd. However many clients watch pods, etcd serves one watch for
// pods. This is the apiserver's watch cache (docs/MECHANISMS.md) and
// mechanisms M1 (layering: clients -> apiserver -> watch cache -> etcd),
// M5 (ordered, gap-free watches), M6 (410 Gone once a resourceVersion has
// left the window) and M8 (one etcd watch, many clients; LIST from cache).
// Labs: docs/labs/03-watch-cache.md and docs/labs/04-list-semantics.md.
//
// Cache implements registry.Interface in front of *registry.Store: writes
// go straight to the Store (never through the cache), and the cache learns
// about them from its etcd watch, like any other watcher.
//
// What the cache knows about a resource comes from its descriptor in the
// table New is given (registry.Resource): its window (WatchCacheSize,
// unless --watch-cache-sizes names it) and its indexes (Indexes). An index
// on a field makes a LIST or WATCH whose field selector requires one value
// of it read only the objects with that value, and wakes only the watchers
// that asked for it: the pods' index on spec.nodeName serves each kubelet
// its own pods. Selectors judge a change on its old and new states
// (registry.Predicate.SelectChange), exactly as the Store's watch does. The
// cache's metrics go to its stack's registry (Config.Metrics), and
// /debug/watchcache reads the same series.
//
// # What each request gets
//
//   - LIST resourceVersion="" (a consistent read): the cache asks etcd for
//     its current revision with one count-only read, waits until it has
//     caught up with that revision (apiserver_watch_cache_read_wait_seconds),
//     and answers from memory; if it does not catch up within 3 s the list
//     goes to etcd. With ConsistentListFromCache off it always goes to etcd.
//   - LIST "0": whatever the cache holds now, with no wait. It can be stale.
//   - LIST "N" (NotOlderThan, or no match): waits until the cache reaches N,
//     then answers; after 3 s, 504 "Too large resource version" with
//     Retry-After. Exact, continue tokens, and a limit with any version
//     other than "0" go to etcd, as upstream. A limit with "0" is ignored:
//     the whole list comes back, without a continue token.
//   - GET "" reads etcd (quorum); "0" and "N" may be answered from memory.
//   - WATCH "" or "0": synthetic ADDED events for the current state ("":
//     after the same wait as a consistent LIST, or from etcd if the cache
//     cannot catch up in time), then live events. "N":
//     every event after N still in the window, then live events; N older
//     than the window gives one ERROR event, 410 Expired "too old resource
//     version: N (M)", where M is the oldest resourceVersion a watch may
//     start from. sendInitialEvents=true streams the state and ends it with
//     a BOOKMARK annotated k8s.io/initial-events-end (client-go's watch-list
//     mode). allowWatchBookmarks adds a BOOKMARK every BookmarkFrequency,
//     and one shortly before the watch's deadline.
//
// # Resources that come and go
//
// The cache follows its resource table (registry.Table.Subscribe) until
// Close unsubscribes it: a resource added at run time (a custom resource,
// when its CRD is Established) gets a resourceCache of its own, started
// at once; one that leaves the table has its context cancelled, which
// ends its two goroutines and every client watch of it. Cache.caches is a map that is
// never modified but replaced whole (copy on write) by TableChanged, under
// Cache.mu; every read loads it without a lock. Lock order: the table's
// writer lock, then Cache.mu, then a resourceCache's mu. A request that
// looked its resource up before the resource left is served by the
// Storage (etcd), as any uncached resource. Every served version of a
// custom resource is a resource of its own here, with its own window and
// etcd watch of the same prefix (upstream keeps one cache per CRD).
//
// # Goroutines: who owns what
//
// Per cached resource (resourceCache):
//
//   - run (reflector.go) is the only writer of the cache. It lists the
//     resource from etcd at revision R, opens Store.Watch from R with
//     bookmarks (etcd progress notifications), and applies each event: it
//     updates the object store, appends the event to the window, advances
//     the resourceVersion and dispatches the event to the watchers, all in
//     one critical section. It also sends the periodic bookmarks. When its
//     etcd watch ends for any reason other than Close, it marks the cache
//     not ready, ends every client watch, and lists again (a
//     re-initialisation). It exits when Close cancels its context.
//   - requestProgress (progress.go) asks etcd for a progress notification
//     every 100 ms while some reader is waiting for the cache to catch up:
//     a resource with no writes would otherwise never learn that etcd's
//     revision moved on because of other resources. It exits with run.
//   - each client watch has one goroutine (watcher.run in watcher.go). It
//     sends the watch's initial events, then forwards what the dispatcher
//     put in its buffer, filtered by the watch's selectors, to the result
//     channel. It owns the result channel and closes it when it returns.
//
// # Locks and channels
//
//   - resourceCache.mu (sync.RWMutex) guards the object store, the window,
//     the resourceVersion and its change channel, readiness, pause state,
//     and the watcher index. run, Watch (registering) and watcher removal
//     take it for writing; LIST, GET and waits take it for reading and copy
//     what they need out before doing slow work (filtering, building lists).
//   - cachingObject.mu guards one event's encodings. It is a leaf: nothing
//     else is locked while it is held.
//   - Lock order: resourceCache.mu, then (inside a watcher's stop) nothing.
//     Under mu, channels are only sent on without blocking (a full buffer
//     ends that watcher) or closed; mu is never held while waiting.
//   - watcher.input is the buffer between the dispatcher and one watcher:
//     only run sends on it, under mu, never blocking; it is never closed.
//   - watcher.done is closed exactly once (sync.Once) to end a watcher: by
//     Stop, by the dispatcher when the buffer is full, or when the cache
//     re-initialises or closes. watcher.result is closed by watcher.run.
//   - resourceCache.rvChanged is closed (and replaced) under mu whenever the
//     resourceVersion grows: it wakes every reader waiting for freshness.
//
// # Invariants
//
//   - Window: events are held at ever-growing indices; the events in the
//     window are exactly those with index in [start, end), stored at
//     index % capacity, so end-start <= capacity. Every event of the
//     resource with a resourceVersion greater than the window's floor is in
//     the window (ring.go).
//   - An event is applied to the store, appended to the window and handed to
//     every registered watcher in one critical section, and a watcher is
//     registered (with its initial state or window interval) in another.
//     So every event is either in what a watcher started from or in its
//     buffer, never both and never neither.
//   - A watcher never sees a gap, a duplicate, or an event out of order; it
//     never sees an event at or below the resourceVersion it started from,
//     nor a BOOKMARK older than an event it has seen. A watcher that cannot
//     keep up is ended (its result channel closes) rather than slowing the
//     dispatcher or other watchers; the client re-watches from the last
//     resourceVersion it saw.
//   - Objects in the cache are never modified. Each element carries one
//     cachingObject (caching_object.go) that encodes a private copy once per
//     encoding (media type and form) and shares the bytes: it is the object
//     of the watch event that stored the element, of the ADDED events of
//     every watch that starts with the current state, and the item a
//     ListShared answer (the apiserver's JSON and protobuf LISTs) hands out.
//     So an object is encoded once however many watchers and LISTs send it,
//     until an update stores a new element. List copies the objects into a
//     new typed list, and GET returns a deep copy.
//   - The cache never writes to etcd.
//
// # Where minicp differs from kube-apiserver
//
//   - Windows have a fixed size per resource (--watch-cache-sizes);
//     upstream resizes between 100 and 100k events to keep about 75 s.
//   - A WATCH with resourceVersion "" and no sendInitialEvents starts from
//     the cache's state after a consistent wait, as a consistent LIST does;
//     upstream's cacher starts it at once from whatever it holds, as "0".
//     Either way a client watch costs etcd nothing.
//   - The window's floor is the revision of the last evicted event, so a
//     watch may resume from any revision after it. Upstream allows from the
//     oldest held event's revision minus one; the two agree when every
//     revision belongs to one event, and the floor stays exact when an
//     expiring etcd lease deletes several keys in one revision.
//   - Progress is requested as soon as a reader starts waiting, then every
//     100 ms (upstream: on a 100 ms tick).
//   - A LIST from memory is written from each object's kept encoding;
//     upstream encodes the list afresh every time (streaming it item by
//     item since 1.33). The bytes are the same; the memory is not: an
//     object that has been listed holds its JSON and protobuf bytes too.
//   - Pause and Resume (POST /debug/watchcache/<resource>/pause) hold a
//     resource's feed back, so that labs can show a stale cache.
package watchcache
