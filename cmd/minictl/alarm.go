package main

import (
	"context"
	"fmt"
	"io"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/embedetcd"
)

// etcdAlarm runs `etcd alarm list` and `etcd alarm disarm`.
func etcdAlarm(ctx context.Context, client *clientv3.Client, args []string, out io.Writer) error {
	if len(args) != 1 || (args[0] != "list" && args[0] != "disarm") {
		return fmt.Errorf("etcd alarm takes list or disarm: %w", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if args[0] == "list" {
		alarms, err := embedetcd.ListAlarms(ctx, client)
		if err != nil {
			return err
		}
		if len(alarms) == 0 {
			fmt.Fprintln(out, "no alarms")
		}
		for _, a := range alarms {
			fmt.Fprintln(out, a)
		}
		return nil
	}
	disarmed, err := embedetcd.DisarmAlarms(ctx, client)
	if err != nil {
		return err
	}
	if len(disarmed) == 0 {
		fmt.Fprintln(out, "no alarms to disarm")
		return nil
	}
	for _, a := range disarmed {
		fmt.Fprintf(out, "disarmed %s\n", a)
	}
	fmt.Fprintln(out, "if the database is still over --quota-backend-bytes, the next write raises NOSPACE again: compact and defrag first")
	return nil
}
