// Package kinds is the catalogue of the built-in kinds minicp serves: for
// each kind, the registry.Resource that describes it (names, scope, etcd
// prefix, subresources, selectable fields, indexes), its defaulting and
// validation (a rest.Strategy, built by kindStrategy from typed
// functions), its `kubectl get` columns and, for workloads, its scale
// rules, all in the kind's own file: <group>_<resource>.go for one kind
// (apps_deployments.go), <group>.go for a small group (rbac.go).
//
// Package registry is the mechanism (descriptor and table, keys, codecs,
// revisions, transactions, list and watch); this package only fills its
// descriptors, and registry knows no kind by name. Builtin returns fresh
// descriptors on every call, so that no two tables share a mutable value;
// the strategies and printers they point to are immutable.
//
// What a kind takes from outside its objects comes through its strategy's
// write hooks: a Service's ClusterIP and NodePorts are allocated from the
// ranges of Config (upstream's --service-cluster-ip-range and
// --service-node-port-range), which controlplane passes when it builds its
// table (Config.NewTable).
//
// To add a built-in kind: give it a file with its entry (entry(...)), its
// strategy (kindStrategy with its defaults and validation, when upstream
// has any) and its printer; list the entry in Builtin; and, for a group
// minicp did not serve yet, add the group version to package apigroups,
// the one list of groups (the Scheme is built from it). Its
// storage sample goes to internal/storagetest (kinds_samples.go), so that
// the conformance suite runs over it too.
package kinds
