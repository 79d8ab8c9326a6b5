package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/controller/raycluster"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/test/internal/testobj"
)

// dataSet is what the benchmark creates: clusters × (1 head + workers)
// Running Ray pods over namespaces, podsPerNode to a kwok node.
type dataSet struct {
	clusters, workers, namespaces, podsPerNode int
}

func (d dataSet) pods() int  { return d.clusters * (1 + d.workers) }
func (d dataSet) nodes() int { return (d.pods() + d.podsPerNode - 1) / d.podsPerNode }

func nsName(i int) string      { return fmt.Sprintf("bench-%02d", i) }
func clusterName(i int) string { return fmt.Sprintf("c-%05d", i) }

// podName is the name of pod j of cluster i (0 the head).
func podName(i, j int) string {
	if j == 0 {
		return clusterName(i) + "-head"
	}
	return fmt.Sprintf("%s-worker-%d", clusterName(i), j-1)
}

// create makes the namespaces, the RayClusters and their pods with
// `parallel` clients. Pods are built as raydar's operator builds them
// (controller/raycluster.BuildPod: KubeRay's env, probes, volumes, labels,
// owner reference) and bound to a kwok node; kwok plays them Running.
func (d dataSet) create(ctx context.Context, cs kubernetes.Interface, c client.Client, nodes []string, parallel int, logf func(string, ...any)) error {
	for n := range d.namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(n)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	start := time.Now()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, parallel)
	cfg := raycluster.DefaultBuildConfig()
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= d.clusters || ctx.Err() != nil {
					return
				}
				rc := testobj.Cluster(nsName(i%d.namespaces), clusterName(i), int32(d.workers))
				if err := c.Create(ctx, rc); err != nil {
					errs <- fmt.Errorf("creating RayCluster %s: %w", rc.Name, err)
					return
				}
				for j := range 1 + d.workers {
					b := raycluster.PodBuild{Name: podName(i, j), Head: j == 0}
					if j > 0 {
						b.Group = &rc.Spec.WorkerGroupSpecs[0]
					}
					p := raycluster.BuildPod(rc, b, "bench", cfg)
					p.Spec.NodeName = nodes[(i*(1+d.workers)+j)/d.podsPerNode]
					if _, err := cs.CoreV1().Pods(rc.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
						errs <- fmt.Errorf("creating pod %s: %w", p.Name, err)
						return
					}
				}
				if n := done.Add(1); n%500 == 0 {
					logf("%d/%d clusters created (%s)", n, d.clusters, time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	logf("%d RayClusters and %d pods created in %s", d.clusters, d.pods(), time.Since(start).Round(time.Millisecond))
	return nil
}

// waitRunning polls (paged lists) until every Ray pod is Running and Ready.
func (d dataSet) waitRunning(ctx context.Context, cs kubernetes.Interface, logf func(string, ...any)) error {
	start := time.Now()
	sel := rayv1.RayPodSelector().String()
	for {
		ready, cont := 0, ""
		for {
			l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: 5000, Continue: cont})
			if err != nil {
				return err
			}
			for i := range l.Items {
				if podReady(&l.Items[i]) {
					ready++
				}
			}
			if cont = l.Continue; cont == "" {
				break
			}
		}
		if ready >= d.pods() {
			logf("%d pods Running and Ready after %s", ready, time.Since(start).Round(time.Second))
			return nil
		}
		logf("%d/%d pods Running and Ready", ready, d.pods())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
	}
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
