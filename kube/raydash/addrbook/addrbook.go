package addrbook

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FileName is the book's name in the sandbox's state directory.
const FileName = "ray-heads.json"

// Extension is the name of the kubeconfig cluster extension that holds the
// book's path: {"addressBook": "/path/to/ray-heads.json"}.
const Extension = "raydar.io/sandbox"

// kind marks the file's format.
const kind = "RaydarSandboxAddressBook/v1"

// Entry is where one RayCluster's simulated head answers.
type Entry struct {
	Namespace string `json:"namespace"`
	Cluster   string `json:"cluster"`
	// Dashboard is the dashboard's base URL ("http://127.0.0.1:41234").
	Dashboard string `json:"dashboard"`
	// ServeProxy is the Serve proxy's base URL; it stands for every pod's
	// proxy (Serve's proxy_location EveryNode).
	ServeProxy string `json:"serveProxy,omitempty"`
	// Metrics is the base URL of the cluster's simulated Ray nodes'
	// metrics: BASE/<pod IP>/metrics is a node's Prometheus exposition
	// (kube/gauges.BookFetcher).
	Metrics string `json:"metrics,omitempty"`
}

type fileFormat struct {
	Kind  string  `json:"kind"`
	Heads []Entry `json:"heads"`
}

// Write replaces the book at path with heads (sorted), atomically.
func Write(path string, heads []Entry) error {
	heads = append([]Entry{}, heads...) // [] rather than null when empty
	sort.Slice(heads, func(a, b int) bool {
		if heads[a].Namespace != heads[b].Namespace {
			return heads[a].Namespace < heads[b].Namespace
		}
		return heads[a].Cluster < heads[b].Cluster
	})
	data, err := json.MarshalIndent(fileFormat{Kind: kind, Heads: heads}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("addrbook: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("addrbook: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("addrbook: %w", err)
	}
	return nil
}

// Book reads an address book file, again whenever the file changed. It is
// safe for concurrent use. A missing or unreadable file is an empty book:
// no cluster has a reachable head.
type Book struct {
	path string

	mu    sync.Mutex
	stat  os.FileInfo // of the file last read; nil: none read
	heads map[types.NamespacedName]Entry
	err   error // of the last read
}

// Open returns the book at path. It does no I/O: the file is read on the
// first lookup.
func Open(path string) *Book { return &Book{path: path} }

// Path is the book's file.
func (b *Book) Path() string { return b.path }

// DashboardURL is the dashboard's base URL of the RayCluster namespace/name,
// false while it has no simulated head (kube/raydash.AddressBook).
func (b *Book) DashboardURL(namespace, name string) (string, bool) {
	e, ok := b.Lookup(namespace, name)
	return e.Dashboard, ok && e.Dashboard != ""
}

// ServeProxyURL is the Serve proxy's base URL of the RayCluster
// namespace/name (controller.ServeProxyAddressBook).
func (b *Book) ServeProxyURL(namespace, name string) (string, bool) {
	e, ok := b.Lookup(namespace, name)
	return e.ServeProxy, ok && e.ServeProxy != ""
}

// MetricsURL is the base URL of the simulated Ray nodes' metrics of the
// RayCluster namespace/name (kube/gauges.MetricsBook).
func (b *Book) MetricsURL(namespace, name string) (string, bool) {
	e, ok := b.Lookup(namespace, name)
	return e.Metrics, ok && e.Metrics != ""
}

// Lookup returns the entry of the RayCluster namespace/name.
func (b *Book) Lookup(namespace, name string) (Entry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refresh()
	e, ok := b.heads[types.NamespacedName{Namespace: namespace, Name: name}]
	return e, ok
}

// Err is the error of the last read ("" when the file was read, or is
// absent), for diagnostics.
func (b *Book) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// refresh rereads the file when it is not the one last read: Write renames
// a new file into place, so a new inode, size or time means new content.
// b.mu must be held.
func (b *Book) refresh() {
	fi, err := os.Stat(b.path)
	if err != nil {
		b.stat, b.heads = nil, nil
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		b.err = err
		return
	}
	if b.stat != nil && os.SameFile(b.stat, fi) && fi.Size() == b.stat.Size() && fi.ModTime().Equal(b.stat.ModTime()) {
		return
	}
	heads, err := read(b.path)
	b.err = err
	if err != nil {
		b.stat, b.heads = nil, nil
		return
	}
	b.stat, b.heads = fi, heads
}

func read(path string) (map[types.NamespacedName]Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("addrbook: %s: %w", path, err)
	}
	if f.Kind != kind {
		return nil, fmt.Errorf("addrbook: %s: kind %q, want %q", path, f.Kind, kind)
	}
	m := make(map[types.NamespacedName]Entry, len(f.Heads))
	for _, e := range f.Heads {
		m[types.NamespacedName{Namespace: e.Namespace, Name: e.Cluster}] = e
	}
	return m, nil
}

// extension is the kubeconfig extension's content.
type extension struct {
	AddressBook string `json:"addressBook"`
}

// Advertise records bookPath in the kubeconfig file at kubeconfigPath, on
// every cluster entry (a sandbox's kubeconfig has one).
func Advertise(kubeconfigPath, bookPath string) error {
	kc, err := clientcmd.LoadFromFile(kubeconfigPath)
	if err != nil {
		return fmt.Errorf("addrbook: %w", err)
	}
	raw, err := json.Marshal(extension{AddressBook: bookPath})
	if err != nil {
		return err
	}
	for _, c := range kc.Clusters {
		if c.Extensions == nil {
			c.Extensions = map[string]runtime.Object{}
		}
		c.Extensions[Extension] = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	}
	// Same atomic replacement as the book: a raydar starting now reads the
	// old kubeconfig or the new one.
	tmp := kubeconfigPath + ".tmp-" + fmt.Sprint(time.Now().UnixNano())
	if err := clientcmd.WriteToFile(*kc, tmp); err != nil {
		return fmt.Errorf("addrbook: %w", err)
	}
	if err := os.Rename(tmp, kubeconfigPath); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("addrbook: %w", err)
	}
	return nil
}

// FromKubeconfig returns the address book path recorded on the cluster of
// the context contextName ("" for the current context), false when that
// cluster is not a raydar sandbox that runs simulated heads.
func FromKubeconfig(kc *clientcmdapi.Config, contextName string) (string, bool, error) {
	if contextName == "" {
		contextName = kc.CurrentContext
	}
	ctx, ok := kc.Contexts[contextName]
	if !ok || ctx == nil {
		return "", false, nil
	}
	c, ok := kc.Clusters[ctx.Cluster]
	if !ok || c == nil {
		return "", false, nil
	}
	obj, ok := c.Extensions[Extension]
	if !ok || obj == nil {
		return "", false, nil
	}
	u, ok := obj.(*runtime.Unknown)
	if !ok {
		return "", false, fmt.Errorf("addrbook: kubeconfig extension %s of cluster %s: unexpected %T", Extension, ctx.Cluster, obj)
	}
	var ext extension
	if err := json.Unmarshal(u.Raw, &ext); err != nil {
		return "", false, fmt.Errorf("addrbook: kubeconfig extension %s of cluster %s: %w", Extension, ctx.Cluster, err)
	}
	if ext.AddressBook == "" {
		return "", false, fmt.Errorf("addrbook: kubeconfig extension %s of cluster %s has no addressBook", Extension, ctx.Cluster)
	}
	return ext.AddressBook, true, nil
}
