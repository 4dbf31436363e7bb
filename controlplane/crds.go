package controlplane

import (
	"context"
	"sync"

	"minicp/controllers/crd"
	crdserving "minicp/crd"
)

// crdLoops are what CustomResourceDefinitions need at run time: Serving,
// inside the stack, adds and removes the custom resources of established
// CRDs in the resource table; the CRD controller, a client of the API,
// accepts names, establishes CRDs and cleans up deleted ones.
type crdLoops struct {
	cancel context.CancelFunc
	// wg counts the two goroutines; stopCRDLoops waits for them.
	wg sync.WaitGroup
}

// startCRDServing starts Serving and waits until the CRDs already stored
// are served, so that a restarted stack answers for its custom resources
// as soon as it is ready.
func (cp *ControlPlane) startCRDServing(ctx context.Context) error {
	serving, err := crdserving.NewServing(cp.cache, cp.cfg.Resources, cp.logger.With("component", "custom-resources"))
	if err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	cp.crds = &crdLoops{cancel: cancel}
	cp.crds.wg.Add(1)
	// Serving's goroutine ends when stopCRDLoops cancels loopCtx.
	go func() {
		defer cp.crds.wg.Done()
		serving.Run(loopCtx)
	}()
	select {
	case <-serving.Synced():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startCRDController starts the CRD controller against the running apiserver.
func (cp *ControlPlane) startCRDController() error {
	ctrl, err := crd.New(withQPS(cp.clientConfig(), -1), cp.logger.With("component", "crd-controller"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopServing := cp.crds.cancel
	cp.crds.cancel = func() { cancel(); stopServing() }
	cp.crds.wg.Add(1)
	// The controller's goroutine ends when stopCRDLoops cancels ctx.
	go func() {
		defer cp.crds.wg.Done()
		ctrl.Run(ctx, crd.DefaultWorkers)
	}()
	return nil
}

// stopCRDLoops stops the controller and Serving and waits for them.
func (cp *ControlPlane) stopCRDLoops() {
	if cp.crds == nil {
		return
	}
	cp.crds.cancel()
	cp.crds.wg.Wait()
}
