package garbagecollector

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A resource no longer served answers 404: the handler asks for a
// discovery instead of logging, and never blocks the informer.
func TestANotServedResourceAsksForADiscovery(t *testing.T) {
	c := &Controller{rediscover: make(chan struct{}, 1)}
	gone := apierrors.NewNotFound(schema.GroupResource{Group: "stable.example.com", Resource: "crontabs"}, "")
	c.watchErrorHandler(context.Background(), nil, gone)
	c.watchErrorHandler(context.Background(), nil, gone) // one pending: does not block
	select {
	case <-c.rediscover:
	default:
		t.Fatal("a 404 did not ask for a discovery")
	}
	select {
	case <-c.rediscover:
		t.Fatal("two 404s asked for two discoveries; one pending is enough")
	default:
	}
}
