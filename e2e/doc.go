// Package e2e holds minicp's end-to-end tests: each file starts the real
// stack in-process with e2e/framework (embedded etcd and apiserver on free
// ports) and asserts one mechanism (M1-M17, docs/MECHANISMS.md) through the clients a user has —
// client-go, the raw etcd client, and kubectl where it is installed.
package e2e
