package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/embedetcd"
)

// alarmCommand is `etcd alarm list` and `etcd alarm disarm`.
func (a *app) alarmCommand() *cobra.Command {
	sub := func(use, short string, disarm bool) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  noArgs,
			RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, _ []string) error {
				return etcdAlarm(ctx, client, disarm, a.out)
			}),
		}
	}
	return group("alarm", "list or disarm etcd's alarms (NOSPACE when the database reaches its quota)",
		sub("list", "list the alarms raised on any member", false),
		sub("disarm", "disarm every alarm; compact and defrag first, or the next write raises NOSPACE again", true))
}

// etcdAlarm runs `etcd alarm list`, or `etcd alarm disarm`.
func etcdAlarm(ctx context.Context, client *clientv3.Client, disarm bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !disarm {
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
