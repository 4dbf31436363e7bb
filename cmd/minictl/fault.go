package main

// minictl fault: add, list and clear the faults of a minicp started with
// --enable-debug-faults, through its /debug/faults API (package faults).
//
//	minictl fault add etcd.range --delay 2s [--resource pods] [--error timeout]
//	minictl fault ls
//	minictl fault clear [POINT]
//	minictl fault stop-member minicp-etcd-1      (and restart-member)

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"minicp/faults"
	"minicp/internal/datadir"
)

// defaultAPIServer is minicp's default address.
const defaultAPIServer = "http://127.0.0.1:8080"

// faultOptions are the flags of the fault commands.
type faultOptions struct {
	server, resource, errText string
	delay                     time.Duration
}

func (a *app) faultCommand() *cobra.Command {
	var o faultOptions
	sub := func(use, short string, args cobra.PositionalArgs, fn func(ctx context.Context, api *faultAPI, args []string) error) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				if o.server == "" {
					if err := a.checkDataDir("--server URL"); err != nil {
						return err
					}
				}
				url := apiServerURL(o.server, a.dataDir)
				if err := a.probeAPIServer(cmd.Context(), url, a.apiServerFrom(o.server)); err != nil {
					return err
				}
				api, err := newFaultAPI(url, a.dataDir)
				if err != nil {
					return err
				}
				return fn(cmd.Context(), api, args)
			},
		}
	}
	add := sub("add POINT", "inject a fault at POINT: "+pointList(), oneArg("fault add takes one POINT, one of "+pointList()),
		func(ctx context.Context, api *faultAPI, args []string) error {
			f := faults.Fault{Point: faults.Point(args[0]), Resource: o.resource, Delay: faults.Duration(o.delay), Error: o.errText}
			var added faults.Fault
			if err := api.do(ctx, http.MethodPost, "", f, &added); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "fault added: %s\n", describeFault(added))
			return nil
		})
	add.Example = "  minictl fault add etcd.range --delay 2s --resource pods"
	add.Flags().StringVar(&o.resource, "resource", "", "only requests on this resource (pods, configmaps, events, leases.coordination.k8s.io)")
	add.Flags().DurationVar(&o.delay, "delay", 0, "hold each request back this long (it still ends at its deadline)")
	add.Flags().StringVar(&o.errText, "error", "", "fail each request: for etcd points "+faults.ErrorTimeout+" or "+faults.ErrorNoLeader+"; for admission any text")
	ls := sub("ls", "list the faults in force, with their hits", noArgs, func(ctx context.Context, api *faultAPI, _ []string) error {
		var list faults.List
		if err := api.do(ctx, http.MethodGet, "", nil, &list); err != nil {
			return err
		}
		return printFaults(a.out, list.Faults)
	})
	clearCmd := sub("clear [POINT]", "clear every fault, or those at POINT", cobra.MaximumNArgs(1), func(ctx context.Context, api *faultAPI, args []string) error {
		query := ""
		if len(args) == 1 {
			query = "?point=" + args[0]
		}
		var cleared faults.Cleared
		if err := api.do(ctx, http.MethodDelete, query, nil, &cleared); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "%d fault(s) cleared\n", cleared.Cleared)
		return nil
	})
	member := func(action string) *cobra.Command {
		return sub(action+"-member NAME", action+" the embedded etcd member NAME", oneArg("fault "+action+"-member takes one member NAME (see minictl etcd status)"),
			func(ctx context.Context, api *faultAPI, args []string) error {
				var done faults.MemberAction
				if err := api.do(ctx, http.MethodPost, "/members/"+args[0]+"/"+action, nil, &done); err != nil {
					return err
				}
				fmt.Fprintf(a.out, "etcd member %s: %s done\n", done.Member, done.Action)
				return nil
			})
	}
	c := group("fault", "inject faults into a minicp started with --enable-debug-faults", add, ls, clearCmd, member("stop"), member("restart"))
	c.Long = `fault speaks to a minicp started with --enable-debug-faults (--server URL,
or the kubeconfig in --data-dir), through its /debug/faults API.`
	c.PersistentFlags().StringVar(&o.server, "server", "", "apiserver URL (default: the kubeconfig minicp wrote in --data-dir, else "+defaultAPIServer+")")
	return c
}

// oneArg requires exactly one argument, saying what it should be.
func oneArg(msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError(cmd, "%s", msg)
		}
		return nil
	}
}

func pointList() string {
	var names []string
	for _, p := range faults.Points {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

// apiServerFrom says where apiServerURL found the URL, for messages.
func (a *app) apiServerFrom(flagValue string) string {
	if flagValue != "" {
		return "from --server"
	}
	return "the server of " + datadir.Kubeconfig(a.dataDir) + ", else minicp's default"
}

// apiServerURL is --server, or the server of minicp's kubeconfig.
func apiServerURL(flagValue, dataDir string) string {
	if flagValue != "" {
		return strings.TrimSuffix(flagValue, "/")
	}
	cfg, err := clientcmd.LoadFromFile(datadir.Kubeconfig(dataDir))
	if err == nil {
		if ctx, ok := cfg.Contexts[cfg.CurrentContext]; ok {
			if cluster, ok := cfg.Clusters[ctx.Cluster]; ok && cluster.Server != "" {
				return strings.TrimSuffix(cluster.Server, "/")
			}
		}
	}
	return defaultAPIServer
}

// newFaultAPI reaches /debug/faults at url with the credentials of
// minicp's kubeconfig in dataDir (its token, its CA).
func newFaultAPI(url, dataDir string) (*faultAPI, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", datadir.Kubeconfig(dataDir))
	if err != nil {
		cfg = &rest.Config{}
	}
	cfg.Host = url
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a client for %s: %w", url, err)
	}
	client.Timeout = 10 * time.Second
	return &faultAPI{url: url + "/debug/faults", client: client}, nil
}

type faultAPI struct {
	url    string
	client *http.Client
}

// do sends one request and decodes the answer into out, or returns the
// Status message the apiserver answered with.
func (a *faultAPI) do(ctx context.Context, method, query string, body, out any) error {
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+query, payload)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return fmt.Errorf("reaching %s: %w", a.url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s answered 404: start minicp with --enable-debug-faults", a.url)
	}
	if resp.StatusCode >= 300 {
		var status struct{ Message string }
		if json.Unmarshal(raw, &status) == nil && status.Message != "" {
			return fmt.Errorf("%s: %s", resp.Status, status.Message)
		}
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}

func describeFault(f faults.Fault) string {
	parts := []string{string(f.Point)}
	if f.Resource != "" {
		parts = append(parts, "on "+f.Resource)
	}
	if f.Delay > 0 {
		parts = append(parts, "delay "+time.Duration(f.Delay).String())
	}
	if f.Error != "" {
		parts = append(parts, "error "+f.Error)
	}
	return strings.Join(parts, ", ")
}

func printFaults(out io.Writer, list []faults.Fault) error {
	if len(list) == 0 {
		fmt.Fprintln(out, "no faults")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POINT\tRESOURCE\tDELAY\tERROR\tHITS")
	for _, f := range list {
		resource, errText := f.Resource, f.Error
		if resource == "" {
			resource = "*"
		}
		if errText == "" {
			errText = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", f.Point, resource, time.Duration(f.Delay), errText, f.Hits)
	}
	return tw.Flush()
}
