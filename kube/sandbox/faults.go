package sandbox

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// PhaseAnnotation makes kwok end a pod that runs on a fake node in the
// phase it is set to, "Failed" or "Succeeded" (exit code 1 or 0). See
// Sandbox.SetPodPhase. It is read by the stages in stages.yaml, as are the
// fault annotations below.
const PhaseAnnotation = "sandbox.raydar.io/phase"

// ExitedContainerAnnotation and ExitCodeAnnotation, set together on a
// Running pod, make kwok show that one container terminated with that exit
// code while the others run, and the pod not Ready: a container of a
// restartPolicy Never pod that ran to its end (a SidecarMode submitter in
// its head pod). See Sandbox.EndContainer.
const (
	ExitedContainerAnnotation = "sandbox.raydar.io/exited-container"
	ExitCodeAnnotation        = "sandbox.raydar.io/exit-code"
)

// Annotations that make kwok play a kubelet failure on a pod of a fake
// node (see stages.yaml). Set them on a pod, or on the pod template that
// makes it (a RayCluster's group template), before the pod starts.
const (
	// CrashAnnotation, set to an exit code ("3") or "OOMKilled", makes the
	// pod's containers crash-loop: Running, not Ready, waiting
	// CrashLoopBackOff, last state terminated with that exit code (OOMKilled:
	// reason OOMKilled, exit code 137), restartCount 5.
	CrashAnnotation = "sandbox.raydar.io/crash"
	// ImagePullAnnotation, set to "ErrImagePull" or "ImagePullBackOff",
	// keeps the pod Pending with its containers waiting for that reason and
	// the kubelet's message for it.
	ImagePullAnnotation = "sandbox.raydar.io/image-pull"
	// ConfigCheckAnnotation is the sandbox's config checker's verdict on a
	// pod that references ConfigMaps or Secrets: "ok", or the reason the
	// kubelet would keep its containers waiting for: ConfigErrorReason
	// (an env or envFrom reference is missing) or MountErrorReason (a
	// volume's). A pod that references neither runs unless it is set.
	ConfigCheckAnnotation = "sandbox.raydar.io/config-check"
	// ConfigErrorAnnotation holds the kubelet's message for the missing
	// reference (`configmap "app-config" not found`); kwok copies it into
	// the waiting containers' state.
	ConfigErrorAnnotation = "sandbox.raydar.io/config-error"
	// NotReadyAnnotation, set to "true" on a pod or its template before
	// it starts, makes kwok run it not Ready (Ready and ContainersReady
	// False, reason ContainersNotReady, containers running but not
	// ready), as a pod whose readiness probe has not passed yet, until a
	// status update makes it Ready. A Ray head pod so held gets a
	// simulated dashboard that answers every request 503 and counts it
	// (headsim Sim.RequestsBeforeReady), so a test sees any call made
	// before the head is Ready instead of a connection nobody counts.
	NotReadyAnnotation = "sandbox.raydar.io/not-ready"
)

// The waiting reasons of a missing reference, as the kubelet reports them.
const (
	ConfigErrorReason = "CreateContainerConfigError"
	MountErrorReason  = "ContainerCreating"
	// ConfigOK is ConfigCheckAnnotation's value when every reference exists.
	ConfigOK = "ok"
)

// configLookup finds a ConfigMap's or Secret's keys in a pod's namespace;
// ok is false when the object does not exist.
type configLookup func(name string) (keys map[string]bool, ok bool)

// kubeletConfigCheck checks, as the kubelet does before it starts a pod's
// containers, the ConfigMaps and Secrets the pod references: its volumes
// first (a missing one fails the mount: MountErrorReason), then every
// container's envFrom and env valueFrom (ConfigErrorReason). Optional
// references are skipped. It returns ConfigOK when everything exists, and
// refs false when the pod references nothing.
func kubeletConfigCheck(pod *corev1.Pod, configMap, secret configLookup) (reason, message string, refs bool) {
	ns := pod.Namespace
	for _, v := range pod.Spec.Volumes {
		type ref struct {
			kind, name string
			optional   *bool
		}
		var rs []ref
		if c := v.ConfigMap; c != nil {
			rs = append(rs, ref{"configmap", c.Name, c.Optional})
		}
		if s := v.Secret; s != nil {
			rs = append(rs, ref{"secret", s.SecretName, s.Optional})
		}
		if p := v.Projected; p != nil {
			for _, src := range p.Sources {
				if c := src.ConfigMap; c != nil {
					rs = append(rs, ref{"configmap", c.Name, c.Optional})
				}
				if s := src.Secret; s != nil {
					rs = append(rs, ref{"secret", s.Name, s.Optional})
				}
			}
		}
		for _, r := range rs {
			refs = true
			look := configMap
			if r.kind == "secret" {
				look = secret
			}
			if _, ok := look(r.name); !ok && !isTrue(r.optional) {
				return MountErrorReason, fmt.Sprintf("MountVolume.SetUp failed for volume %q : %s %q not found", v.Name, r.kind, r.name), true
			}
		}
	}
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if r := e.ConfigMapRef; r != nil {
				refs = true
				if _, ok := configMap(r.Name); !ok && !isTrue(r.Optional) {
					return ConfigErrorReason, fmt.Sprintf("configmap %q not found", r.Name), true
				}
			}
			if r := e.SecretRef; r != nil {
				refs = true
				if _, ok := secret(r.Name); !ok && !isTrue(r.Optional) {
					return ConfigErrorReason, fmt.Sprintf("secret %q not found", r.Name), true
				}
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				refs = true
				keys, ok := configMap(r.Name)
				switch {
				case isTrue(r.Optional):
				case !ok:
					return ConfigErrorReason, fmt.Sprintf("configmap %q not found", r.Name), true
				case !keys[r.Key]:
					return ConfigErrorReason, fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", r.Key, ns, r.Name), true
				}
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				refs = true
				keys, ok := secret(r.Name)
				switch {
				case isTrue(r.Optional):
				case !ok:
					return ConfigErrorReason, fmt.Sprintf("secret %q not found", r.Name), true
				case !keys[r.Key]:
					return ConfigErrorReason, fmt.Sprintf("couldn't find key %s in Secret %s/%s", r.Key, ns, r.Name), true
				}
			}
		}
	}
	if !refs {
		return "", "", false
	}
	return ConfigOK, "", true
}

func isTrue(b *bool) bool { return b != nil && *b }
