package controlplane

import (
	"context"
	"sync"

	"minicp/controllers/garbagecollector"
)

// gcLoop is the running garbage collector (kube-controller-manager's
// --enable-garbage-collector): a client of the apiserver, like the
// namespace controller.
type gcLoop struct {
	cancel context.CancelFunc
	// wg counts the collector's goroutine; stopGarbageCollector waits for it.
	wg sync.WaitGroup
}

// startGarbageCollector starts the garbage collector against the running
// apiserver, unless it is disabled.
func (cp *ControlPlane) startGarbageCollector() error {
	if !cp.cfg.EnableGarbageCollector {
		return nil
	}
	gc, err := garbagecollector.New(garbagecollector.Config{
		REST:         withQPS(cp.clientConfig(), -1),
		ResyncPeriod: cp.cfg.GarbageCollectorResync,
		Metrics:      cp.metrics,
		Logger:       cp.logger.With("component", "garbage-collector"),
		// Upstream's collector reports as "garbage-collector-controller".
		Recorder: cp.recorder("garbage-collector-controller"),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cp.gc = &gcLoop{cancel: cancel}
	cp.gc.wg.Add(1)
	// The collector's goroutine ends when stopGarbageCollector cancels ctx.
	go func() {
		defer cp.gc.wg.Done()
		gc.Run(ctx)
	}()
	return nil
}

// stopGarbageCollector stops the collector and waits for it.
func (cp *ControlPlane) stopGarbageCollector() {
	if cp.gc == nil {
		return
	}
	cp.gc.cancel()
	cp.gc.wg.Wait()
}
