package headsim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/raydar/raydar/kube/raydash"
	"github.com/raydar/raydar/kube/raydash/addrbook"
	"github.com/raydar/raydar/kube/sandbox"
	"github.com/raydar/raydar/kube/sandbox/autoscaler"
	"github.com/raydar/raydar/kube/sandbox/rayhead"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The life of one simulated head: started when its head pod is Running and
// Ready, closed when the pod stops running, goes, or its Ray container
// (the first) is no longer running, published in the address book either
// way. A head pod that is only not Ready keeps its head: a SidecarMode
// submitter that exited makes the pod not Ready while Ray runs on, and the
// head Service publishes not-ready addresses (KubeRay's, as raydar's), so
// the dashboard still answers.

// syncHeadPod starts or closes the head for one head pod.
func (s *Sim) syncHeadPod(ctx context.Context, key string) (time.Duration, error) {
	obj, exists, err := s.pods.GetStore().GetByKey(key)
	if err != nil {
		return 0, err
	}
	var pod *corev1.Pod
	if exists {
		pod = obj.(*corev1.Pod)
	}
	s.mu.Lock()
	cur := s.byPod[key]
	s.mu.Unlock()

	isHead := pod != nil && pod.Labels[rayv1.RayClusterLabelKey] != "" &&
		pod.Labels[rayv1.RayNodeTypeLabelKey] == string(rayv1.HeadNode) // also where a watch ignores the selector (fake clientsets)
	if cur != nil && (!isHead || cur.uid != pod.UID || !rayRunning(pod)) {
		s.stopHead(cur, "head pod gone or its Ray container not running")
		cur = nil
	}
	want := isHead && runningAndReady(pod)
	s.syncEarly(key, pod, isHead && cur == nil && !want && rayRunning(pod) && pod.Annotations[sandbox.NotReadyAnnotation] == "true")
	if !want || cur != nil {
		return 0, nil
	}
	return 0, s.startHead(ctx, key, pod)
}

// runningAndReady: phase Running, Ready condition True, not terminating.
func runningAndReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// rayRunning: phase Running, not terminating, and the Ray container (the
// first) running; a pod whose status names no containers (written by hand,
// not by kwok) is judged by its Ready condition.
func rayRunning(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Spec.Containers) == 0 {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == p.Spec.Containers[0].Name {
			return c.State.Running != nil
		}
	}
	return runningAndReady(p)
}

func (s *Sim) startHead(ctx context.Context, key string, pod *corev1.Pod) error {
	cluster := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Labels[rayv1.RayClusterLabelKey]}
	hopts := s.opts.Head
	rc := &rayv1.RayCluster{}
	rcErr := s.cl.Get(ctx, cluster, rc)
	if rcErr == nil && raydash.K8sTokenAuth(rc) {
		hopts.Authorize = s.k8sTokenAuthorizer(rc) // k8sauth.go
	} else if rcErr == nil {
		if name := raydash.AuthSecretName(rc); name != "" {
			sec, err := s.cs.CoreV1().Secrets(rc.Namespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case err == nil && len(sec.Data[raydash.AuthTokenKey]) > 0:
				hopts.Token = string(sec.Data[raydash.AuthTokenKey])
			case err == nil:
				s.opts.Logf("headsim: %s: Secret %s has no %s; the head accepts any caller", cluster, name, raydash.AuthTokenKey)
			default:
				s.opts.Logf("headsim: %s: reading auth Secret %s: %v; the head accepts any caller", cluster, name, err)
			}
		}
	}
	h := rayhead.New(hopts)
	token := hopts.Token
	if err := h.Start("127.0.0.1:0"); err != nil {
		return err
	}
	counts := s.counts(cluster)
	f, err := newFront(h.DashboardURL(), counts)
	if err != nil {
		h.Close()
		return err
	}
	hctx, cancel := context.WithCancel(s.loop.Context())
	hd := &head{uid: pod.UID, pod: key, cluster: cluster, h: h, front: f, token: token, cancel: cancel}
	if s.opts.Autoscaler != nil && rcErr == nil && rc.Spec.IsAutoscalingEnabled() {
		if s.opts.Config == nil {
			s.opts.Logf("headsim: %s: no autoscaler: Options.Config is not set", cluster)
		} else if d, err := autoscaler.New(autoscaler.Options{Config: s.opts.Config, Namespace: cluster.Namespace, Cluster: cluster.Name,
			State: h.AutoscalerState, Interval: s.opts.Autoscaler.Interval, Logf: s.opts.Logf}); err != nil {
			s.opts.Logf("headsim: %s: no autoscaler: %v", cluster, err)
		} else {
			hd.as = d
		}
	}

	if rcErr == nil {
		// A Ray head knows its own node from its first answer: its nodes are
		// set before it is published, not after (nodesQ runs later; a job
		// submitted in between was placed on resources not known yet).
		h.SetNodes(RayNodes(rc, s.podsWith(cluster.String(), pod)))
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		f.Close()
		h.Close()
		return nil
	}
	old := s.byClust[cluster]
	s.byPod[key] = hd
	s.byClust[cluster] = hd
	refuse := s.refusing[cluster]
	s.mu.Unlock()
	if old != nil && old != hd {
		// Two head pods for one cluster (a replacement while the old one
		// terminates): the newest answers.
		s.mu.Lock()
		if s.byPod[old.pod] == old {
			delete(s.byPod, old.pod)
		}
		s.mu.Unlock()
		s.closeHead(old)
	}
	if refuse {
		f.SetRefuse(true)
	}
	s.nodesQ.Add(cluster.String()) // tell the new head its nodes
	if err := s.publish(); err != nil {
		s.opts.Logf("headsim: %v", err)
	}
	s.opts.Logf("headsim: %s: head pod %s Ready; dashboard at %s", cluster, pod.Name, f.URL())

	if hd.as != nil {
		s.loop.Go(func() { hd.as.Run(hctx) })
	}
	if c := sidecar(pod); c != nil {
		dashPort := int(rayv1.DefaultDashboardPort)
		if rcErr == nil {
			dashPort = dashboardPortOf(rc)
		}
		s.loop.Go(func() { s.runSidecar(hctx, pod, c, cluster, dashPort) })
	}
	return nil
}

// stopHead forgets a head and closes it.
func (s *Sim) stopHead(h *head, why string) {
	s.mu.Lock()
	if s.byPod[h.pod] == h {
		delete(s.byPod, h.pod)
	}
	if s.byClust[h.cluster] == h {
		delete(s.byClust, h.cluster)
	}
	delete(s.logs, h.pod) // its sidecar's
	s.mu.Unlock()
	if err := s.publish(); err != nil {
		s.opts.Logf("headsim: %v", err)
	}
	s.opts.Logf("headsim: %s: closing the head of pod %s: %s", h.cluster, h.pod, why)
	s.closeHead(h)
}

// publish writes the address book (Options.AddressBook) from the heads
// there are now. Writes are serialised and each takes its snapshot while
// holding the turn, so the file ends with the latest state.
func (s *Sim) publish() error {
	if s.opts.AddressBook == "" {
		return nil
	}
	s.bookMu.Lock()
	defer s.bookMu.Unlock()
	s.mu.Lock()
	entries := make([]addrbook.Entry, 0, len(s.byClust))
	for k, h := range s.byClust {
		entries = append(entries, addrbook.Entry{Namespace: k.Namespace, Cluster: k.Name, Dashboard: h.front.URL(), ServeProxy: h.h.ProxyURL(),
			Metrics: h.h.MetricsURL()})
	}
	for _, e := range s.early {
		if _, ok := s.byClust[e.cluster]; !ok {
			entries = append(entries, addrbook.Entry{Namespace: e.cluster.Namespace, Cluster: e.cluster.Name, Dashboard: e.front.URL()})
		}
	}
	s.mu.Unlock()
	return addrbook.Write(s.opts.AddressBook, entries)
}

// closeHead refuses connections at once and stops the jobs in the
// background (a running job gets the stop grace period).
func (s *Sim) closeHead(h *head) {
	h.cancel()
	h.front.Close()
	s.closing.Add(1)
	go func() {
		defer s.closing.Done()
		h.h.Close()
	}()
}
