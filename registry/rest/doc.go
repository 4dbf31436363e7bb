// Package rest is what a kind gives the generic store, as upstream's
// k8s.io/apiserver/pkg/registry/rest is: its Strategy (defaulting,
// validation, what an update may change, how a DELETE proceeds, the write
// hooks), the generic steps every write runs around it (namespace, system
// fields, name generation, immutable metadata: metadata.go), how a DELETE
// decides between deleting, marking and waiting (deletion.go), and the
// Printer of its `kubectl get` rows (printer.go).
//
// Package registry runs these steps inside its transactions; package kinds
// fills them for the built-in kinds and package crd for custom resources.
// Nothing here reads or writes etcd.
package rest
