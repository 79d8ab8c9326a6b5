package headsim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerEnv is the environment a container of pod starts with, as the
// kubelet builds it: HOSTNAME, then envFrom (ConfigMaps and Secrets, with
// their prefix), then env in order, each value with $(VAR) expanded from
// the entries above it and valueFrom read (Secret and ConfigMap keys, the
// pod's fields). What cannot be read is reported through logf and left
// empty: a kubelet would not have started the container (the sandbox's
// config checker keeps such pods Pending, configcheck.go), so this happens
// only in a race with a deletion.
func (s *Sim) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, logf func(string, ...any)) []string {
	vals := map[string]string{"HOSTNAME": pod.Name}
	order := []string{"HOSTNAME"}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	ns := pod.Namespace
	for _, from := range c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := s.cs.CoreV1().ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil {
				logf("envFrom ConfigMap %s: %v", from.ConfigMapRef.Name, err)
				continue
			}
			data = cm.Data
		case from.SecretRef != nil:
			sec, err := s.cs.CoreV1().Secrets(ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				logf("envFrom Secret %s: %v", from.SecretRef.Name, err)
				continue
			}
			data = map[string]string{}
			for k, v := range sec.Data {
				data[k] = string(v)
			}
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(from.Prefix+k, data[k])
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expandDependent(e.Value, vals))
			continue
		}
		v, err := s.envSource(ctx, pod, e.ValueFrom)
		if err != nil {
			logf("env %s: %v", e.Name, err)
		}
		set(e.Name, v)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out
}

func (s *Sim) envSource(ctx context.Context, pod *corev1.Pod, src *corev1.EnvVarSource) (string, error) {
	ns := pod.Namespace
	switch {
	case src.SecretKeyRef != nil:
		sec, err := s.cs.CoreV1().Secrets(ns).Get(ctx, src.SecretKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		v, ok := sec.Data[src.SecretKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("Secret %s has no key %s", src.SecretKeyRef.Name, src.SecretKeyRef.Key)
		}
		return string(v), nil
	case src.ConfigMapKeyRef != nil:
		cm, err := s.cs.CoreV1().ConfigMaps(ns).Get(ctx, src.ConfigMapKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		v, ok := cm.Data[src.ConfigMapKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("ConfigMap %s has no key %s", src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key)
		}
		return v, nil
	case src.FieldRef != nil:
		return podField(pod, src.FieldRef.FieldPath)
	}
	return "", fmt.Errorf("valueFrom %v is not read by the sandbox's stand-in", src)
}

// podField is the downward API's value of a pod field.
func podField(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if strings.HasPrefix(path, prefix+"['") && strings.HasSuffix(path, "']") {
			return m[strings.TrimSuffix(strings.TrimPrefix(path, prefix+"['"), "']")], nil
		}
	}
	return "", fmt.Errorf("fieldRef %s is not read by the sandbox's stand-in", path)
}

// expandDependent expands $(VAR) in an env value from the variables defined
// above it, as the kubelet does: $$ is a literal $, an undefined $(VAR) is
// left as written.
func expandDependent(v string, vals map[string]string) string {
	if !strings.Contains(v, "$") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '$' || i+1 >= len(v) {
			b.WriteByte(v[i])
			continue
		}
		switch v[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(v[i+2:], ')')
			if end < 0 {
				b.WriteString(v[i:])
				return b.String()
			}
			name := v[i+2 : i+2+end]
			if val, ok := vals[name]; ok {
				b.WriteString(val)
			} else {
				b.WriteString(v[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
