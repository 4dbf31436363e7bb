// Package apiserver is minicp's kube-apiserver: the HTTP layer between
// Kubernetes clients and storage. M1, layering (docs/MECHANISMS.md),
// is the path every request takes:
//
//	kubectl / client-go / kubelet-sim
//	        |  REST: /api/v1/..., /apis/<group>/<version>/...; JSON, YAML or protobuf
//	        v
//	apiserver    route -> negotiate -> decode and check -> registry call -> encode
//	        |
//	registry.Interface   the etcd-backed Store (or a watch cache in front of it)
//	        |
//	etcd
//
// Nothing but the apiserver talks to etcd: no client ever sees a key, a
// revision number other than as resourceVersion, or an etcd error. This
// package turns HTTP into calls on registry.Interface and the answers back
// into HTTP, the way upstream's endpoint handlers do:
//
//   - Routing (requestinfo.go, rest.go): a path names a group, version,
//     optional namespace, resource, name and subresource; the method names
//     the verb (get, list, watch, create, update, patch, delete). Unknown
//     paths are 404, known paths with the wrong method 405.
//   - Negotiation (negotiate.go): the Accept header picks JSON, YAML or
//     protobuf, or a transformed response (as=Table for kubectl get, in
//     JSON or YAML; as=PartialObjectMetadata for the metadata client, in
//     protobuf too, which that client asks for first); Content-Type picks
//     the body's decoder.
//   - Writes (rest.go, decode.go, patch.go): the body is size-limited,
//     decoded with fieldValidation's strictness (for a resource with a
//     schema of its own, Resource.Coerce, the fields it prunes count as
//     unknown fields), checked against the URL (apiVersion, kind, name,
//     namespace), and handed to the store. Update
//     and patch run inside the store's compare-and-swap loop, so a patch is
//     re-applied to the fresh object when another write wins the race.
//   - Field ownership (fieldmanager.go, apply.go): every create, update,
//     patch and apply records its manager (fieldManager, else the
//     User-Agent's product) in metadata.managedFields with apimachinery's
//     field manager, inside that loop and before admission and the
//     strategy (one field manager per descriptor and subresource, built
//     on its first write and kept with the descriptor); server-side apply
//     (application/apply-patch+yaml) merges an applied configuration by
//     those entries, answers 409 Conflict
//     naming the managers of the fields it would take (unless force), and
//     creates a missing object. Writes through status and scale record
//     their subresource; a Scale's entries map onto the object's
//     spec.replicas (scale.go).
//   - Watch (watch.go): a chunked response, one frame per event, flushed at
//     once; it ends cleanly on timeoutSeconds, client disconnect or shutdown
//     and always stops the registry watch.
//   - Admission (package apiserver/admission, run from rest.go): CREATE,
//     UPDATE and DELETE pass an ordered chain of plugins before storage
//     acts; NamespaceLifecycle keeps objects out of missing and
//     Terminating namespaces, as upstream's.
//   - Before anything else (package apiserver/filters, in the order its
//     doc.go gives; the live page's login in login.go): a Host that names another server is 400 (DNS rebinding), a write
//     from a page of another origin 403, a write without a JSON, YAML,
//     protobuf or patch Content-Type 415; then the bearer token (or the
//     live page's session cookie, for reads) says who the user is, 401
//     without one except on /healthz, /livez, /readyz and /version; then
//     the in-flight limits answer 429 with Retry-After beyond
//     --max-requests-inflight reads or --max-mutating-requests-inflight
//     writes (watches exempt); then the authorization slot, empty for
//     now. SelfSubjectReview and
//     SelfSubjectAccessReview answer who the user is and that every
//     authenticated user may do everything (selfreview.go).
//   - Connections (listen.go, filters/connlimit.go): TLS with the serving
//     certificate, plain HTTP beside it on loopback only; header (32 s)
//     and idle (90 s) timeouts; a cap on open connections below the
//     open-files limit.
//   - Around every request (server.go, filters/timeout.go, trace.go): panic
//     recovery, the request deadline (504 when exceeded), metrics, -v=2
//     request logs, and the phases of the request (authentication,
//     admission, storage, cache wait, etcd, encoding), logged when it is
//     slow and returned in the Minicp-Phases header when asked (M15,
//     triage: is the apiserver slow, or etcd?).
//   - What is not served (notserved.go): a resource or subresource outside
//     the table is a 404 naming it and pointing to `kubectl api-resources`;
//     a pod's log, exec, attach and portforward are a 400 saying that
//     minicp runs no containers.
//
// Everything the server knows about a resource comes from its descriptor
// in the table New is given (registry.Resource): routes, scope, verbs,
// subresources, categories, printer columns. The table's set changes while
// the server runs (custom resources, package crd): a request looks its
// resource up once and keeps that descriptor to its end; discovery is
// rebuilt for every state of the table and swapped in whole
// (discovery.Handler); OpenAPI after a change (openapi.Handler). Custom
// resources (Resource.TextOnly) are Unstructured objects, encoded as the
// JSON or YAML serializer writes them, with their own apiVersion and kind;
// protobuf is refused for them as upstream refuses it, but for their
// metadata alone (textonly.go). A
// JSON LIST of them from the watch cache is written around each item's
// kept encoding as a built-in kind's (list_shared.go): every served
// version has a cache of its own, holding objects at that version.
//
// The rooms of the server, each its own package below apiserver/:
//
//   - filters: what decides whether a request is served at all (Host,
//     Origin, Content-Type, authentication, in-flight limit, the
//     authorization slot), the request deadline and the connection cap;
//   - admission: the admission API (attributes, plugins, the chain and
//     NamespaceLifecycle), which plugins outside the server implement;
//   - discovery and openapi: the documents that describe the table to
//     clients, following its changes;
//   - this package: routing, the REST handlers, negotiation, tables,
//     health, metrics and the live page's login; server.go wires the
//     rooms together.
//
// Invariants:
//
//   - Writes never go through a cache: create, update, patch and delete
//     call the registry, whose Store writes to etcd in a transaction; the
//     response carries the revision of that transaction.
//   - Every error a client sees is a metav1.Status with upstream's code,
//     reason and message, encoded in the negotiated media type (JSON when
//     none can be negotiated) — including panics (500), deadlines (504),
//     oversized bodies (413) and unknown media types (406, 415).
//   - A failed request changes nothing: every check on the request runs
//     before the registry is called.
//   - Every watch handler stops its registry watch before returning.
//   - Shutdown never waits on a connection for its own sake: every
//     long-running request (a watch, a CPU profile or trace) derives its
//     context from the server-wide stopping context, which Shutdown
//     cancels first, and a connection that has not carried a request is
//     closed at once; only requests in flight are waited for,
//     until the caller's deadline, after which every connection left is
//     closed (shutdown.go). The server speaks HTTP/1.1 only (listen.go),
//     so every stream is a connection net/http can see.
//   - No handler runs for a request that failed the Host, Origin,
//     Content-Type or credential checks, or that the in-flight limits
//     refused.
//   - A request that hits its deadline before its answer started gets a
//     complete 504 and its connection is closed, so a body that stopped
//     arriving never holds the client or the connection.
//
// Labs in docs/labs exercise these through kubectl and /metrics.
package apiserver
