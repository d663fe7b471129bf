// The Flux peer of syncward's benchmarks: what kustomize-controller does with a set of objects,
// through Flux's own engine (github.com/fluxcd/pkg/ssa), on the same API server and the same files.
// One process runs the given passes one after the other, each with a new client (discovery again,
// as syncward's benchmark does for itself), and prints one JSON line per pass:
//
//	cold: read the YAML files, ResourceManager.ApplyAllStaged with the options kustomize-controller
//	      builds (ssa.DefaultApplyOptions plus its selectors and cleanup), then WaitForSet for the
//	      applied objects at kustomize-controller's health-check interval (5s);
//	noop: the same with nothing changed (Flux's no-op: a GET and a dry-run apply per object).
//
// Requests are counted at the client's transport, so what the engine sends is what is reported.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// kustomize-controller's names: its field manager and the group of its labels and selectors.
const (
	controllerName = "kustomize-controller"
	group          = "kustomize.toolkit.fluxcd.io"
)

type counter struct {
	mu      sync.Mutex
	byVerb  map[string]int
	dryRuns int
}

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.byVerb[req.Method]++
		if req.URL.Query().Get("dryRun") != "" {
			c.dryRuns++
		}
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type pass struct {
	Pass       string         `json:"pass"`
	Ms         float64        `json:"ms"`
	ReadMs     float64        `json:"readMs"`
	ApplyMs    float64        `json:"applyMs"`
	WaitMs     float64        `json:"waitMs"`
	Objects    int            `json:"objects"`
	Requests   int            `json:"requests"`
	ByVerb     map[string]int `json:"byVerb"`
	DryRuns    int            `json:"dryRuns"`
	Writes     int            `json:"writes"`
	Actions    map[string]int `json:"actions"`
	Error      string         `json:"error,omitempty"`
	Options    map[string]any `json:"options"`
	StartedAt  string         `json:"startedAt"`
	FinishedAt string         `json:"finishedAt"`
}

func readObjects(dir, namespace string) ([]*unstructured.Unstructured, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var objects []*unstructured.Unstructured
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		objs, err := ssautil.ReadObjects(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		objects = append(objects, objs...)
	}
	// A Kustomization's targetNamespace: every namespaced object goes into the benchmark's namespace.
	for _, o := range objects {
		o.SetNamespace(namespace)
	}
	return objects, normalize.UnstructuredList(objects)
}

// applyOptions are the options kustomize-controller passes to ApplyAllStaged for a Kustomization
// with the API's defaults (force: false, no ignore rules, no custom stage kinds).
func applyOptions() ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.Force = false
	opts.ExclusionSelector = map[string]string{group + "/reconcile": "disabled", group + "/ssa": "Ignore"}
	opts.IfNotPresentSelector = map[string]string{group + "/ssa": "IfNotPresent"}
	opts.ForceSelector = map[string]string{group + "/force": "enabled"}
	managers := []ssa.FieldManager{
		{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
		{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: controllerName, OperationType: metav1.ManagedFieldsOperationUpdate},
	}
	opts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations:   []string{corev1.LastAppliedConfigAnnotation, group + "/checksum", "fluxcd.io/sync-checksum"},
		Labels:        []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: managers,
		Exclusions:    map[string]string{group + "/ssa": "Merge"},
	}
	return opts
}

func newManager(cfg *rest.Config, c *counter, concurrency int) (*ssa.ResourceManager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(c.wrap)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	kube, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	poller := polling.NewStatusPoller(kube, mapper, polling.Options{})
	m := ssa.NewResourceManager(kube, poller, ssa.Owner{Field: controllerName, Group: group})
	m.SetConcurrency(concurrency)
	return m, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func run(name string, cfg *rest.Config, dir, namespace string, concurrency int, waitInterval, timeout time.Duration, wait bool) pass {
	c := &counter{byVerb: map[string]int{}}
	p := pass{Pass: name, Actions: map[string]int{}, StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	p.Options = map[string]any{
		"concurrentSSA": concurrency, "qps": cfg.QPS, "burst": cfg.Burst,
		"waitInterval": waitInterval.String(), "timeout": timeout.String(), "wait": wait,
	}
	start := time.Now()
	finish := func(err error) pass {
		p.Ms = ms(time.Since(start))
		p.ByVerb = c.byVerb
		for verb, n := range c.byVerb {
			p.Requests += n
			if verb != http.MethodGet {
				p.Writes += n
			}
		}
		p.DryRuns = c.dryRuns
		p.Writes -= c.dryRuns
		if err != nil {
			p.Error = err.Error()
		}
		p.FinishedAt = time.Now().UTC().Format(time.RFC3339Nano)
		return p
	}
	objects, err := readObjects(dir, namespace)
	if err != nil {
		return finish(err)
	}
	p.Objects = len(objects)
	m, err := newManager(cfg, c, concurrency)
	if err != nil {
		return finish(err)
	}
	m.SetOwnerLabels(objects, "bench", namespace)
	p.ReadMs = ms(time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	applyStart := time.Now()
	cs, err := m.ApplyAllStaged(ctx, objects, applyOptions())
	p.ApplyMs = ms(time.Since(applyStart))
	if err != nil {
		return finish(err)
	}
	toCheck := ssa.NewChangeSet()
	for _, e := range cs.Entries {
		p.Actions[string(e.Action)]++
		if e.Action != ssa.SkippedAction {
			toCheck.Add(e)
		}
	}
	if wait {
		waitStart := time.Now()
		err = m.WaitForSetWithContext(ctx, toCheck.ToObjMetadataSet(), ssa.WaitOptions{Interval: waitInterval, Timeout: timeout})
		p.WaitMs = ms(time.Since(waitStart))
	}
	return finish(err)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	dir := flag.String("dir", "", "folder of YAML files (read recursively)")
	namespace := flag.String("namespace", "", "namespace for every object (a Kustomization's targetNamespace)")
	passes := flag.String("passes", "cold,noop", "comma-separated passes, run in order: cold, noop")
	// kustomize-controller's defaults: --concurrent-ssa=4, --kube-api-qps=50, --kube-api-burst=100,
	// health checks polled every 5s (its checkHealth), timeout = the Kustomization's interval.
	concurrency := flag.Int("concurrent-ssa", 4, "concurrent server-side apply operations (--concurrent-ssa)")
	qps := flag.Float64("kube-api-qps", 50, "client queries per second (--kube-api-qps)")
	burst := flag.Int("kube-api-burst", 100, "client burst (--kube-api-burst)")
	waitInterval := flag.Duration("wait-interval", 5*time.Second, "health-check poll interval")
	timeout := flag.Duration("timeout", 10*time.Minute, "apply and wait timeout")
	noWait := flag.Bool("no-wait", false, "skip WaitForSet")
	flag.Parse()
	if *kubeconfig == "" || *dir == "" || *namespace == "" {
		fmt.Fprintln(os.Stderr, "flux-peer: --kubeconfig, --dir and --namespace are required")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "flux-peer: %v\n", err)
		os.Exit(1)
	}
	cfg.QPS = float32(*qps)
	cfg.Burst = *burst
	cfg.UserAgent = controllerName + " (syncward bench peer)"
	out := json.NewEncoder(os.Stdout)
	failed := false
	for _, name := range strings.Split(*passes, ",") {
		p := run(name, cfg, *dir, *namespace, *concurrency, *waitInterval, *timeout, !*noWait)
		if p.Error != "" {
			failed = true
		}
		if err := out.Encode(p); err != nil {
			fmt.Fprintf(os.Stderr, "flux-peer: %v\n", err)
			os.Exit(1)
		}
	}
	if failed {
		os.Exit(1)
	}
}
