// Package admission is the admission API: the attributes of a request
// being admitted, the plugin interface, the ordered chain that runs the
// plugins, and NamespaceLifecycle, the one plugin built in. The apiserver
// runs the chain; packages that only contribute a plugin (faults) import
// this small package instead of the server.
//
// After a request is decoded and before storage acts on it, an ordered
// chain of plugins may reject it (or, upstream, change it). The triage
// drill (M15, docs/MECHANISMS.md) names a long admission chain as one of the
// apiserver-side answers to "why 504?": time spent here is neither etcd's
// nor the cache's, and shows up in the admission phase of the request's
// trace and in apiserver_admission_controller_admission_duration_seconds.
//
// The apiserver runs the chain for CREATE, UPDATE (also PATCH and the
// status and finalize subresources) and DELETE. For updates it runs inside
// the store's read-modify-write loop, as upstream does, so a plugin sees
// the object being replaced and an update that creates (PUT of a missing
// event or lease) is admitted as a CREATE.
package admission
