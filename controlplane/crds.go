package controlplane

import (
	"context"
	"sync"

	crdserving "minicp/crd"
)

// crdLoops is Serving, which, inside the stack, adds and removes the
// custom resources of established CRDs in the resource table. The CRD
// controller, a client of the API that establishes them, is the
// controller manager's (controllermanager.go).
type crdLoops struct {
	cancel context.CancelFunc
	// wg counts Serving's goroutine; stopCRDLoops waits for it.
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

// stopCRDLoops stops Serving and waits for it.
func (cp *ControlPlane) stopCRDLoops() {
	if cp.crds == nil {
		return
	}
	cp.crds.cancel()
	cp.crds.wg.Wait()
}
