package controlplane

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/controllers/crd"
	"minicp/controllers/garbagecollector"
	"minicp/controllers/namespace"
	"minicp/lease"
	"minicp/registry"
)

// controller is one control loop the controller manager runs: a client of
// the apiserver, as each of kube-controller-manager's controllers is.
type controller struct {
	// name is what --controllers calls it.
	name string
	// enabled reports whether the rest of the configuration wants it (a
	// flag of its own, such as --enable-garbage-collector); nil: always.
	enabled func(*Config) bool
	// start builds the loop, with ctx bounding any wait for its first
	// lists, and returns what runs it: run returns once the loop's
	// goroutines have all ended, after its context ends.
	start func(ctx context.Context, cp *ControlPlane) (run func(context.Context), err error)
	// afterNodes starts it once the simulated nodes are registered
	// rather than before they start (see Start's order).
	afterNodes bool
}

// controllers are every loop the controller manager can run, in the order
// it starts them; it stops them in the reverse order. The garbage
// collector comes last, after the simulated nodes' registration: its
// discovery and first lists of every resource would otherwise compete
// with the others' start and with the registration.
var controllers = []controller{
	{name: "crd-controller", start: startCRDController},
	{name: "namespace-controller", start: startNamespaceController},
	{name: "node-lifecycle-controller", enabled: func(c *Config) bool { return c.Nodes.LifecycleController }, start: startNodeLifecycleController},
	{name: "garbage-collector-controller", enabled: func(c *Config) bool { return c.EnableGarbageCollector }, start: startGarbageCollector, afterNodes: true},
}

// controllerManager holds the running loops.
type controllerManager struct {
	running []runningController // in start order
}

// runningController is one started loop: cancel ends it, done is closed
// once its goroutines have.
type runningController struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
}

// startControllers starts every controller that --controllers and the
// rest of the configuration enable, in the order of controllers: Start
// calls it before the simulated nodes start (afterNodes false) and once
// they are registered (afterNodes true). On an error the ones already
// started keep running until Close stops them.
func (cp *ControlPlane) startControllers(ctx context.Context, afterNodes bool) error {
	if cp.controllers == nil {
		cp.controllers = &controllerManager{}
	}
	for _, c := range controllers {
		if c.afterNodes != afterNodes {
			continue
		}
		if !controllerEnabled(cp.cfg.Controllers, c.name) || (c.enabled != nil && !c.enabled(&cp.cfg)) {
			continue
		}
		run, err := c.start(ctx, cp)
		if err != nil {
			return fmt.Errorf("starting the %s: %w", c.name, err)
		}
		loopCtx, cancel := context.WithCancel(context.Background())
		rc := runningController{name: c.name, cancel: cancel, done: make(chan struct{})}
		// The loop's goroutine ends when stopControllers cancels loopCtx.
		go func() {
			defer close(rc.done)
			run(loopCtx)
		}()
		cp.controllers.running = append(cp.controllers.running, rc)
	}
	return nil
}

// stopControllers stops the running loops in the reverse order of their
// start, each one's goroutines ended before the next is stopped.
func (cp *ControlPlane) stopControllers() {
	if cp.controllers == nil {
		return
	}
	for _, rc := range slices.Backward(cp.controllers.running) {
		rc.cancel()
		<-rc.done
	}
	cp.controllers.running = nil
}

// startCRDController builds the CRD controller: it accepts names,
// establishes CRDs and cleans up deleted ones (upstream runs it in the
// apiextensions apiserver; minicp has one apiserver, so it runs here).
func startCRDController(_ context.Context, cp *ControlPlane) (func(context.Context), error) {
	ctrl, err := crd.New(withQPS(cp.clientConfig(), -1), cp.logger.With("component", "crd-controller"))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { ctrl.Run(ctx, crd.DefaultWorkers) }, nil
}

// startNamespaceController builds the namespace controller, which empties
// Terminating namespaces and then finalizes them.
func startNamespaceController(_ context.Context, cp *ControlPlane) (func(context.Context), error) {
	ctrl, err := namespace.New(withQPS(cp.clientConfig(), -1), cp.logger.With("component", "namespace-controller"))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { ctrl.Run(ctx, namespace.DefaultWorkers) }, nil
}

// startNodeLifecycleController starts the node lifecycle controller and
// waits for its informers, so that it knows every node before minicp says
// it is ready.
func startNodeLifecycleController(ctx context.Context, cp *ControlPlane) (func(context.Context), error) {
	cs, closeIdle, err := lease.NewClientset(cp.clientConfig(), 2)
	if err != nil {
		return nil, err
	}
	ccfg := cp.cfg.Nodes.Controller
	ccfg.Logger = cp.logger.With("component", "node-lifecycle-controller")
	ccfg.Recorder = cp.recorder(lease.ControllerComponent)
	ctrl, err := lease.NewController(ccfg, cs)
	if err == nil {
		err = ctrl.Start(ctx)
	}
	if err != nil {
		closeIdle()
		return nil, err
	}
	return func(ctx context.Context) {
		<-ctx.Done()
		ctrl.Stop()
		closeIdle()
	}, nil
}

// startGarbageCollector builds the garbage collector
// (kube-controller-manager's --enable-garbage-collector).
func startGarbageCollector(_ context.Context, cp *ControlPlane) (func(context.Context), error) {
	gc, err := garbagecollector.New(garbagecollector.Config{
		REST:             withQPS(cp.clientConfig(), -1),
		ResyncPeriod:     cp.cfg.GarbageCollectorResync,
		IgnoredResources: gcIgnoredResources(cp.cfg.Resources),
		Metrics:          cp.metrics,
		Logger:           cp.logger.With("component", "garbage-collector"),
		// Upstream's collector reports as "garbage-collector-controller".
		Recorder: cp.recorder("garbage-collector-controller"),
	})
	if err != nil {
		return nil, err
	}
	return gc.Run, nil
}

// gcIgnoredResources are the resources whose descriptors keep them from
// the garbage collector.
func gcIgnoredResources(table *registry.Table) []schema.GroupResource {
	var out []schema.GroupResource
	for _, res := range table.All() {
		if res.GarbageCollectorIgnored {
			out = append(out, res.GroupVersion.WithResource(res.Name).GroupResource())
		}
	}
	return out
}

// addControllersFlag registers --controllers, as kube-controller-manager
// spells it: "*" is every controller, "name" adds one, "-name" removes one.
func addControllersFlag(fs *flag.FlagSet, c *Config) {
	names := make([]string, len(controllers))
	for i, ctrl := range controllers {
		names[i] = ctrl.name
	}
	fs.Func("controllers", "comma-separated controllers to run: '*' is all of them, 'name' enables one, '-name' disables one (they are "+strings.Join(names, ", ")+"; default *)", func(s string) error {
		c.Controllers = splitList(s)
		return nil
	})
}

// validateControllers checks that --controllers names only controllers
// that exist.
func validateControllers(list []string) error {
	var errs []error
	for _, entry := range list {
		name := strings.TrimPrefix(entry, "-")
		if name == "*" && entry == "*" {
			continue
		}
		if !slices.ContainsFunc(controllers, func(c controller) bool { return c.name == name }) {
			errs = append(errs, fmt.Errorf("--controllers: %q is not a controller minicp runs", entry))
		}
	}
	return errors.Join(errs...)
}

// controllerEnabled applies --controllers to name: an explicit "-name" or
// "name" wins over "*"; an empty list means "*".
func controllerEnabled(list []string, name string) bool {
	if len(list) == 0 {
		return true
	}
	star := false
	for _, entry := range list {
		switch entry {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	return star
}
