// Package datadir is what minicp leaves in its data directory for the
// tools beside it, and how those tools use it: the files naming where etcd
// and the apiserver answer (files.go), a quick probe of those addresses,
// and the error a tool gives when nothing answers there (probe.go).
//
// minicp (package controlplane) writes the files; minictl and kubelet-sim
// read them. Keeping them here, apart from the control plane, lets the
// tools find a running minicp without linking the apiserver, the watch
// cache or the live page.
package datadir
