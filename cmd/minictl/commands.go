package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"

	"minicp/internal/datadir"
)

// app holds minictl's global flags. They are persistent flags of the root
// command, so they may come before or after the command:
// `minictl --data-dir d etcd status` and `minictl etcd status --data-dir d`
// are the same. -h and --help on any command print its help and do
// nothing else (cobra stops before the command runs).
type app struct {
	out             io.Writer
	dataDir         string
	etcdEndpoints   string
	eventsEndpoints string
	kubeconfig      string
}

const rootLong = `minictl: look at what minicp stores in etcd, and poke at it.

It finds etcd from minicp's data directory (--data-dir, default
./minicp-data: the endpoints minicp wrote there) or from --etcd-endpoints;
without either, http://127.0.0.1:2379. Commands that speak to the
apiserver (relist, informer, fault, ui) use the kubeconfig minicp wrote in the
data directory, or --kubeconfig. Before its real request, every command
checks within a second that something answers there, and says so if not.`

func newRootCommand(out io.Writer) *cobra.Command {
	a := &app{out: out}
	root := &cobra.Command{
		Use:           "minictl",
		Short:         "look at what minicp stores in etcd",
		Long:          rootLong,
		SilenceUsage:  true, // an error names its fix; the usage would bury it
		SilenceErrors: true, // main prints the error once, prefixed "minictl:"
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.dataDir, "data-dir", "./minicp-data", "minicp's data directory, where it writes its etcd endpoints and kubeconfig")
	pf.StringVar(&a.etcdEndpoints, "etcd-endpoints", "", "comma-separated etcd client URLs (default: those minicp wrote in --data-dir)")
	pf.StringVar(&a.etcdEndpoints, "endpoints", "", "old name of --etcd-endpoints")
	_ = pf.MarkHidden("endpoints")
	// -h and --help are persistent too, so that cobra knows them while it
	// looks for the command: `minictl --help etcd get` is etcd get's help.
	pf.BoolP("help", "h", false, "help for this command")
	pf.StringVar(&a.eventsEndpoints, "events-etcd-endpoints", "", "comma-separated client URLs of the etcd holding events, when minicp keeps them apart (default: those minicp wrote in --data-dir)")
	pf.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig of the apiserver (default $KUBECONFIG, else <data-dir>/kubeconfig)")
	root.AddCommand(a.etcdCommand(), a.leaseCommand(), a.snapshotCommand(), a.relistCommand(), a.informerCommand(), a.faultCommand(), a.uiCommand())
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(out)
	root.SetErr(out)
	return root
}

// group makes a command that only holds subcommands: alone it prints its
// help; followed by a word that is none of them, it says so.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageError(cmd, "unknown command %q", commandName(cmd)+" "+args[0])
		},
	}
	c.AddCommand(subs...)
	return c
}

// commandName is the command's path without "minictl ": "etcd get".
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// usageError is an error about how a command was called, pointing to its help.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	return fmt.Errorf("%s: see %s --help", fmt.Sprintf(format, args...), cmd.CommandPath())
}

// defaultEtcdEndpoint is etcd's own default, and minicp's.
const defaultEtcdEndpoint = "http://127.0.0.1:2379"

// endpoints are etcd client URLs and where they came from, for messages.
type endpoints struct {
	urls []string
	from string
}

// etcd picks the endpoints: --etcd-endpoints if given, else those minicp
// wrote in its data directory, else etcd's default.
func (a *app) etcd() endpoints {
	if eps := splitComma(a.etcdEndpoints); len(eps) > 0 {
		return endpoints{eps, "from --etcd-endpoints"}
	}
	file := filepath.Join(a.dataDir, datadir.EtcdEndpointsFile)
	if eps, err := datadir.ReadEtcdEndpoints(a.dataDir); err == nil {
		return endpoints{eps, "the endpoints minicp wrote in " + file}
	}
	return endpoints{[]string{defaultEtcdEndpoint}, "etcd's default: there is no " + file}
}

// probeEtcd checks within datadir.ProbeTimeout that something answers
// at eps, and otherwise says what was tried and how to fix it.
func (a *app) probeEtcd(ctx context.Context, eps endpoints) error {
	if err := datadir.Probe(ctx, eps.urls); err != nil {
		return &datadir.NotRunningError{What: "etcd", URLs: eps.urls, From: eps.from, DataDir: a.dataDir, Err: err}
	}
	return nil
}

// withEtcd makes a command's RunE that connects to etcd (after the probe)
// and hands the client to fn.
func (a *app) withEtcd(fn func(ctx context.Context, client *clientv3.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		eps := a.etcd()
		if err := a.probeEtcd(cmd.Context(), eps); err != nil {
			return err
		}
		client, err := newEtcdClient(eps.urls) // its error names the endpoints
		if err != nil {
			return err
		}
		defer client.Close()
		return fn(cmd.Context(), client, args)
	}
}

// kubeconfigPath is --kubeconfig, else $KUBECONFIG, else the kubeconfig
// minicp wrote in its data directory.
func (a *app) kubeconfigPath() string {
	if a.kubeconfig != "" {
		return a.kubeconfig
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return env
	}
	return datadir.Kubeconfig(a.dataDir)
}

// restConfig reads the kubeconfig and checks that its apiserver answers.
func (a *app) restConfig(ctx context.Context) (*rest.Config, error) {
	path := a.kubeconfigPath()
	cfg, err := loadRESTConfig(path)
	if err != nil {
		return nil, err
	}
	if err := a.probeAPIServer(ctx, cfg.Host, "the server of kubeconfig "+path); err != nil {
		return nil, err
	}
	return cfg, nil
}

// probeAPIServer checks that something answers at the apiserver's URL.
func (a *app) probeAPIServer(ctx context.Context, url, from string) error {
	if err := datadir.Probe(ctx, []string{url}); err != nil {
		return &datadir.NotRunningError{What: "the apiserver", URLs: []string{url}, From: from, DataDir: a.dataDir, Err: err}
	}
	return nil
}
