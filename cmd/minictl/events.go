package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"minicp/internal/datadir"
)

// eventsEtcd picks the events etcd's endpoints: the flag, or those
// minicp wrote in its data directory when events have their own etcd
// (--embedded-events-etcd, --etcd-servers-overrides=/events#...); none
// when events share the main etcd.
func (a *app) eventsEtcd() endpoints {
	if eps := splitComma(a.eventsEndpoints); len(eps) > 0 {
		return endpoints{eps, "from --events-etcd-endpoints"}
	}
	eps, err := datadir.ReadEventsEtcdEndpoints(a.dataDir)
	if err != nil {
		return endpoints{}
	}
	return endpoints{eps, "the events endpoints minicp wrote in " + filepath.Join(a.dataDir, datadir.EventsEtcdEndpointsFile)}
}

// eventsEtcdStatus prints the status of the etcd that holds events, when it
// is not the main one, and how many event keys each cluster holds: with
// events moved out (M10), the main etcd holds none.
func eventsEtcdStatus(ctx context.Context, main *clientv3.Client, endpoints []string, out io.Writer) error {
	if len(endpoints) == 0 {
		return nil
	}
	events, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("connecting to the events etcd at %s: %w", strings.Join(endpoints, ","), err)
	}
	defer events.Close()
	fmt.Fprintf(out, "\n# events etcd (%s)\n", strings.Join(endpoints, ","))
	if err := etcdStatus(ctx, events, out); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		name   string
		client *clientv3.Client
	}{{"main etcd", main}, {"events etcd", events}} {
		resp, err := c.client.Get(ctx, "/registry/events/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "event keys in the %s: %d\n", c.name, resp.Count)
	}
	return nil
}
