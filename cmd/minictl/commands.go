package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	errOut          io.Writer      // notes that are not the command's output
	flags           *pflag.FlagSet // the root's persistent flags, to tell given from default
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
data directory, or --kubeconfig; $KUBECONFIG, as for kubectl, wins over
--data-dir, and minictl says so. A data directory that does not exist is
refused unless the command is given addresses of its own. Before its real
request, every command checks within a second that something answers
there, and says so if not, naming where the address came from.`

func newRootCommand(out, errOut io.Writer) *cobra.Command {
	a := &app{out: out, errOut: errOut}
	root := &cobra.Command{
		Use:           "minictl",
		Short:         "look at what minicp stores in etcd",
		Long:          rootLong,
		SilenceUsage:  true, // an error names its fix; the usage would bury it
		SilenceErrors: true, // main prints the error once, prefixed "minictl:"
	}
	pf := root.PersistentFlags()
	a.flags = pf
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
// wrote in its data directory, else etcd's default. A data directory that
// does not exist is an error: the default would reach whichever etcd
// answers there.
func (a *app) etcd() (endpoints, error) {
	if eps := splitComma(a.etcdEndpoints); len(eps) > 0 {
		return endpoints{eps, "from --etcd-endpoints"}, nil
	}
	if err := a.checkDataDir("--etcd-endpoints URLS"); err != nil {
		return endpoints{}, err
	}
	file := filepath.Join(a.dataDir, datadir.EtcdEndpointsFile)
	if eps, err := datadir.ReadEtcdEndpoints(a.dataDir); err == nil {
		return endpoints{eps, "the endpoints minicp wrote in " + file}, nil
	}
	return endpoints{[]string{defaultEtcdEndpoint}, "etcd's default: there is no " + file}, nil
}

// checkDataDir refuses a data directory that does not exist, naming the
// flag that would reach a cluster without one.
func (a *app) checkDataDir(other string) error {
	_, err := os.Stat(a.dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the data directory %s does not exist: start minicp with `go run ./cmd/minicp --data-dir %s`, "+
			"or point this command at a running one with --data-dir DIR or %s", a.dataDir, a.dataDir, other)
	case err != nil:
		return fmt.Errorf("reading the data directory: %w", err)
	}
	return nil
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
		eps, err := a.etcd()
		if err != nil {
			return err
		}
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

// kubeconfig is the kubeconfig minictl uses and where it came from.
type kubeconfig struct {
	path string
	// fromEnv: $KUBECONFIG named it, and it wins over --data-dir, as
	// it does for kubectl.
	fromEnv bool
}

// kubeconfigPath is --kubeconfig, else $KUBECONFIG, else the kubeconfig
// minicp wrote in its data directory (which must exist).
func (a *app) kubeconfigPath() (kubeconfig, error) {
	if a.kubeconfig != "" {
		return kubeconfig{path: a.kubeconfig}, nil
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return kubeconfig{path: env, fromEnv: true}, nil
	}
	if err := a.checkDataDir("--kubeconfig FILE"); err != nil {
		return kubeconfig{}, err
	}
	return kubeconfig{path: datadir.Kubeconfig(a.dataDir)}, nil
}

// restConfig reads the kubeconfig and checks that its apiserver answers.
// When $KUBECONFIG overrides a --data-dir given on the command line, it
// says so first: the two may name different clusters.
func (a *app) restConfig(ctx context.Context) (*rest.Config, error) {
	kc, err := a.kubeconfigPath()
	if err != nil {
		return nil, err
	}
	overrides := kc.fromEnv && a.flags.Changed("data-dir") && !samePath(kc.path, datadir.Kubeconfig(a.dataDir))
	if overrides {
		fmt.Fprintf(a.errOut, "minictl: using $KUBECONFIG (%s), not the kubeconfig of --data-dir %s; unset KUBECONFIG or pass --kubeconfig to choose\n", kc.path, a.dataDir)
	}
	cfg, err := loadRESTConfig(kc.path)
	if err != nil {
		return nil, err
	}
	if !kc.fromEnv {
		return cfg, a.probeAPIServer(ctx, cfg.Host, "the server of kubeconfig "+kc.path)
	}
	if err := datadir.Probe(ctx, []string{cfg.Host}); err != nil {
		fix := "is minicp running there? $KUBECONFIG wins over --data-dir: unset it to use the data directory's kubeconfig, or pass --kubeconfig FILE"
		return nil, &datadir.NotRunningError{What: "the apiserver", URLs: []string{cfg.Host}, From: "the server of kubeconfig " + kc.path + " from $KUBECONFIG", Err: err, Fix: fix}
	}
	return cfg, nil
}

// samePath reports whether two paths name the same file.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// probeAPIServer checks that something answers at the apiserver's URL.
func (a *app) probeAPIServer(ctx context.Context, url, from string) error {
	if err := datadir.Probe(ctx, []string{url}); err != nil {
		return &datadir.NotRunningError{What: "the apiserver", URLs: []string{url}, From: from, DataDir: a.dataDir, Err: err}
	}
	return nil
}
