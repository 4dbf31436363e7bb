// Package promreg is how every minicp package registers its Prometheus
// metrics: with the Registerer of the running stack it belongs to, never
// with Prometheus' default registry, so that two stacks in one process
// (a test binary starts many) share no series.
//
// A component registers its collectors once, when it is built; a second
// component of the same stack with identical collectors (two Stores on one
// registry) gets the collectors the first registered, so both add to the
// same series, as two handlers of one kube-apiserver do.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or returns the identical
// collector an earlier registration left in reg. A nil reg registers
// nothing: the collector works but nobody scrapes it. A different metric
// under the same name is a bug in the caller, so Register panics on it.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err)
}
