package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// pollInterval is how often readiness conditions are checked.
const pollInterval = 50 * time.Millisecond

// poll calls cond until it returns true, ctx ends, or a child process dies.
// Errors from cond are remembered for the timeout message but do not stop the
// poll (the apiserver may answer 404 or 503 while things settle).
func (s *Sandbox) poll(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if dead := s.deadChild(); dead != nil {
			return fmt.Errorf("sandbox: waiting for %s: %w", what, dead)
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("sandbox: waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("sandbox: waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

// ParseCRDs decodes multi-document YAML streams of CRDs, strictly: every
// document is an apiextensions.k8s.io/v1 CustomResourceDefinition (empty
// documents and comments are skipped). Start decodes Options.CRDs with it;
// callers of InstallCRDs use it for theirs.
func ParseCRDs(streams ...[]byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for i, stream := range streams {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
		for doc := 1; ; doc++ {
			raw, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("sandbox: CRDs[%d] document %d: %w", i, doc, err)
			}
			js, err := yaml.YAMLToJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("sandbox: CRDs[%d] document %d: %w", i, doc, err)
			}
			if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
				continue // empty document or only comments
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(js, crd); err != nil {
				return nil, fmt.Errorf("sandbox: CRDs[%d] document %d: %w", i, doc, err)
			}
			if crd.APIVersion != apiextensionsv1.SchemeGroupVersion.String() || crd.Kind != "CustomResourceDefinition" {
				return nil, fmt.Errorf("sandbox: CRDs[%d] document %d is a %s %s, not an apiextensions.k8s.io/v1 CustomResourceDefinition",
					i, doc, crd.APIVersion, crd.Kind)
			}
			crds = append(crds, crd)
		}
	}
	return crds, nil
}

// InstallCRDs creates (or updates) the CRDs and waits until each is
// Established and listed by discovery, as Start does with Options.CRDs;
// a benchmark or test calls it to install a CRD after Start.
func (s *Sandbox) InstallCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	if len(crds) == 0 {
		return nil
	}
	api := s.crdClient.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		_, err := api.Create(ctx, crd.DeepCopy(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *apiextensionsv1.CustomResourceDefinition
			if cur, err = api.Get(ctx, crd.Name, metav1.GetOptions{}); err == nil {
				upd := crd.DeepCopy()
				upd.ResourceVersion = cur.ResourceVersion
				_, err = api.Update(ctx, upd, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("sandbox: installing CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		err := s.poll(ctx, "CRD "+crd.Name+" Established", func(ctx context.Context) (bool, error) {
			cur, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range cur.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return err
		}
	}
	// Established is not yet served: discovery may still lack a kind for a
	// moment, and a client's REST mapper that looks then fails with "no
	// matches for kind" (seen on a loaded machine). Wait until discovery
	// lists every CRD's resource in every served version.
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := crd.Spec.Group + "/" + v.Name
			err := s.poll(ctx, "discovery of "+crd.Spec.Names.Plural+"."+gv, func(ctx context.Context) (bool, error) {
				// The aggregated discovery clients use (REST mappers
				// included), not the per-version endpoint alone.
				_, lists, err := s.clients.Discovery().ServerGroupsAndResources()
				if err != nil && len(lists) == 0 {
					return false, nil // not served yet
				}
				for _, l := range lists {
					if l.GroupVersion != gv {
						continue
					}
					for _, r := range l.APIResources {
						if r.Name == crd.Spec.Names.Plural {
							return true, nil
						}
					}
				}
				return false, nil
			})
			if err != nil {
				return err
			}
		}
	}
	s.logf("%d CRD(s) Established and served", len(crds))
	return nil
}

// probeNamespace holds the sandbox's probe objects.
const probeNamespace = metav1.NamespaceSystem

// ensureNamespace waits for (or creates) a namespace.
func (s *Sandbox) ensureNamespace(ctx context.Context, name string) error {
	return s.poll(ctx, "namespace "+name, func(ctx context.Context) (bool, error) {
		_, err := s.clients.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = s.clients.CoreV1().Namespaces().Create(ctx,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		}
		return err == nil, err
	})
}

// probeScheduling proves that the scheduler binds pods and that kwok runs
// and removes them, with a throwaway pod.
func (s *Sandbox) probeScheduling(ctx context.Context) error {
	nodes := s.Nodes()
	run := s.opts.Kwok && len(nodes) > 0
	if !s.opts.Scheduler && !run {
		return nil
	}
	begin := time.Now()
	if err := s.ensureNamespace(ctx, probeNamespace); err != nil {
		return err
	}
	no := false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "raydar-sandbox-probe", Namespace: probeNamespace},
		Spec: corev1.PodSpec{
			Containers:                   []corev1.Container{{Name: "probe", Image: "raydar.invalid/probe"}},
			AutomountServiceAccountToken: &no,
		},
	}
	if !s.opts.Scheduler {
		pod.Spec.NodeName = nodes[0]
	}
	pods := s.clients.CoreV1().Pods(probeNamespace)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("sandbox: creating the probe pod: %w", err)
	}
	what := "the probe pod to be scheduled"
	if run {
		what = "the probe pod to be scheduled and Running"
	}
	err := s.poll(ctx, what, func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if run && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			return true, nil
		}
		for _, c := range p.Status.Conditions {
			if !run && c.Type == corev1.PodScheduled {
				return true, nil // True, or False because no node fits: either way the scheduler works
			}
		}
		return false, fmt.Errorf("probe pod on node %q is %s, conditions %s", p.Spec.NodeName, p.Status.Phase, conditionsString(p.Status.Conditions))
	})
	if err != nil {
		return err
	}
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
		return fmt.Errorf("sandbox: deleting the probe pod: %w", err)
	}
	err = s.poll(ctx, "the probe pod to be removed", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return err
	}
	s.logf("scheduling probe passed (%s)", since(begin))
	return nil
}

// probeControllerManager proves that the garbage collector works (an owned
// ConfigMap goes away with its owner) and that default service accounts are
// made.
func (s *Sandbox) probeControllerManager(ctx context.Context) error {
	if !s.opts.ControllerManager {
		return nil
	}
	begin := time.Now()
	if err := s.ensureNamespace(ctx, probeNamespace); err != nil {
		return err
	}
	cms := s.clients.CoreV1().ConfigMaps(probeNamespace)
	owner, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "raydar-sandbox-gc-owner"},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("sandbox: garbage-collector probe: %w", err)
	}
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "raydar-sandbox-gc-dependent",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	if _, err := cms.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("sandbox: garbage-collector probe: %w", err)
	}
	background := metav1.DeletePropagationBackground
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return fmt.Errorf("sandbox: garbage-collector probe: %w", err)
	}
	err = s.poll(ctx, "the garbage collector to remove a probe ConfigMap", func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, dep.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return err
	}
	err = s.poll(ctx, "the default ServiceAccount", func(ctx context.Context) (bool, error) {
		_, err := s.clients.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	if err != nil {
		return err
	}
	s.logf("controller-manager probe passed (%s)", since(begin))
	return nil
}

// conditionsString formats pod conditions for error messages.
func conditionsString(cs []corev1.PodCondition) string {
	var b strings.Builder
	b.WriteString("[")
	for i, c := range cs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			fmt.Fprintf(&b, "(%s: %s)", c.Reason, c.Message)
		}
	}
	b.WriteString("]")
	return b.String()
}
