package rayservice

// The objects a RayService owns — its RayClusters, head Service and serve
// Service — and the hashes that tell whether a cluster still matches the
// RayService's spec. Pure functions, no I/O.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/controller/kit"
	"github.com/raydar/raydar/controller/raycluster"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The RayService reconciler's annotations on its clusters; rayapi/v1 is
// their home (see there for what each holds).
const (
	ServeConfigHashKey = rayv1.ServeConfigHashAnnotationKey
	DeleteAfterKey     = rayv1.DeleteAfterAnnotationKey
	replicasHashKey    = rayv1.RayServiceReplicasHashAnnotationKey
)

// hashPrefix marks the cluster-spec hashes raydar writes into
// ray.io/hash-without-replicas-and-workers-to-delete, to tell them from
// KubeRay's (which are computed differently).
const hashPrefix = "rd1-"

// stripForHash removes from a cluster spec everything a RayService
// upgrade ignores: per group replicas, minReplicas, maxReplicas,
// workersToDelete (scaleStrategy) and suspend; tolerations and
// schedulingGates of every pod template; the cluster's upgradeStrategy,
// suspend and managedBy; and the ray.io/serve labels raydar before
// v1.7-conformance put on the pod templates (clusters it made then keep
// their hash). Only the first n worker groups are kept (n < 0: all).
func stripForHash(spec *rayv1.RayClusterSpec, n int) *rayv1.RayClusterSpec {
	s := spec.DeepCopy()
	if n >= 0 && n < len(s.WorkerGroupSpecs) {
		s.WorkerGroupSpecs = s.WorkerGroupSpecs[:n]
	}
	s.UpgradeStrategy = nil
	s.Suspend = nil
	s.ManagedBy = nil
	stripTemplate := func(t *corev1.PodTemplateSpec) {
		t.Spec.Tolerations = nil
		t.Spec.SchedulingGates = nil
		delete(t.Labels, rayv1.RayClusterServingServiceLabelKey)
		if len(t.Labels) == 0 {
			t.Labels = nil
		}
	}
	stripTemplate(&s.HeadGroupSpec.Template)
	for i := range s.WorkerGroupSpecs {
		g := &s.WorkerGroupSpecs[i]
		g.Replicas, g.MinReplicas, g.MaxReplicas, g.Suspend = nil, nil, nil, nil
		g.ScaleStrategy.WorkersToDelete = nil
		stripTemplate(&g.Template)
	}
	return s
}

// clusterHash is raydar's hash of a cluster spec for upgrades, over its
// first n worker groups (n < 0: all), without the fields stripForHash
// removes.
func clusterHash(spec *rayv1.RayClusterSpec, n int) string {
	b, _ := json.Marshal(stripForHash(spec, n))
	sum := sha256.Sum256(b)
	return hashPrefix + hex.EncodeToString(sum[:])[:20]
}

// replicasHash hashes replicas, minReplicas and maxReplicas of every
// worker group of the RayService's cluster config.
func replicasHash(spec *rayv1.RayClusterSpec) string {
	var b strings.Builder
	p := func(v *int32) string {
		if v == nil {
			return "-"
		}
		return strconv.Itoa(int(*v))
	}
	for _, g := range spec.WorkerGroupSpecs {
		b.WriteString(g.GroupName + "=" + p(g.Replicas) + "/" + p(g.MinReplicas) + "/" + p(g.MaxReplicas) + ";")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])[:16]
}

// numWorkerGroups is the number of worker groups the cluster's hash
// covers: the ray.io/num-worker-groups annotation, else its group count.
func numWorkerGroups(rc *rayv1.RayCluster) int {
	if n, err := strconv.Atoi(rc.Annotations[rayv1.NumWorkerGroupsKey]); err == nil && n >= 0 {
		return n
	}
	return len(rc.Spec.WorkerGroupSpecs)
}

// specMatch says how a cluster relates to the RayService's cluster config.
type specMatch int

const (
	// specMismatch: the cluster must be replaced to follow the spec.
	specMismatch specMatch = iota
	// specMatches: same spec up to the ignored fields; replica changes and
	// worker groups appended at the end apply in place.
	specMatches
)

// clusterMatches compares a cluster with the RayService's cluster config.
// Clusters raydar created carry its hash; a cluster created by KubeRay
// (whose hash is computed differently) is compared by hashing its live spec.
func clusterMatches(rc *rayv1.RayCluster, spec *rayv1.RayClusterSpec) specMatch {
	n := numWorkerGroups(rc)
	if n > len(spec.WorkerGroupSpecs) {
		return specMismatch // groups were removed
	}
	want := clusterHash(spec, n)
	have := rc.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey]
	if !strings.HasPrefix(have, hashPrefix) {
		have = clusterHash(&rc.Spec, n)
	}
	if have == want {
		return specMatches
	}
	return specMismatch
}

// ownerRef is the controller owner reference of a RayService's children.
func ownerRef(rs *rayv1.RayService) metav1.OwnerReference {
	return kit.ControllerRef(rayv1.KindRayService, rs.Name, rs.UID)
}

// ownedBy reports whether obj's controller is the RayService.
func ownedBy(obj metav1.Object, rs *rayv1.RayService) bool {
	return controlledBy(obj, rs.UID)
}

// controlledBy reports whether obj's controller has the given UID.
func controlledBy(obj metav1.Object, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller && r.UID == uid {
			return true
		}
	}
	return false
}

// originLabels are the labels that tie a child to its RayService.
func originLabels(rs *rayv1.RayService) map[string]string {
	return map[string]string{
		rayv1.RayOriginatedFromCRNameLabelKey: rs.Name,
		rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayService),
	}
}

// buildCluster builds a new RayCluster of the RayService.
func buildCluster(rs *rayv1.RayService, name string) *rayv1.RayCluster {
	// The spec as the user wrote it: the pods' initial ray.io/serve labels
	// come from the pod builder (buildPod), as in KubeRay.
	spec := rs.Spec.RayClusterSpec.DeepCopy()
	if mb := kit.ChildManagedBy(rs.Spec.ManagedBy, rs.Annotations); mb != nil {
		spec.ManagedBy = mb
	}
	labels := map[string]string{}
	for k, v := range rs.Labels {
		labels[k] = v
	}
	maps.Copy(labels, originLabels(rs))
	// Every annotation of the RayService, kubectl's last-applied
	// configuration too, as KubeRay's constructRayClusterForRayService
	// copies them, and the operator version KubeRay records (raydar's
	// value: a KubeRay that takes over re-stamps such a cluster in place
	// instead of comparing hashes it computes differently).
	ann := maps.Clone(rs.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[rayv1.KubeRayVersion] = kit.KuberayVersionValue
	ann[rayv1.HashWithoutReplicasAndWorkersToDeleteKey] = clusterHash(&rs.Spec.RayClusterSpec, -1)
	ann[rayv1.NumWorkerGroupsKey] = strconv.Itoa(len(spec.WorkerGroupSpecs))
	ann[replicasHashKey] = replicasHash(&rs.Spec.RayClusterSpec)
	return &rayv1.RayCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayCluster},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: rs.Namespace, Labels: labels, Annotations: ann,
			OwnerReferences: []metav1.OwnerReference{ownerRef(rs)},
		},
		Spec: *spec,
	}
}

// inPlaceUpdate applies to a matching cluster what a RayService changes
// without a new cluster: worker groups appended at the end, and replicas,
// minReplicas and maxReplicas when the RayService's values changed since
// they were last applied. It returns the updated copy and what changed, or
// nil when nothing did.
func inPlaceUpdate(rc *rayv1.RayCluster, rs *rayv1.RayService) (*rayv1.RayCluster, []string) {
	spec := &rs.Spec.RayClusterSpec
	upd := rc.DeepCopy()
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	var what []string
	n := numWorkerGroups(rc)
	if len(spec.WorkerGroupSpecs) > n && len(upd.Spec.WorkerGroupSpecs) == n {
		added := spec.DeepCopy().WorkerGroupSpecs[n:]
		for _, g := range added {
			what = append(what, "added worker group "+g.GroupName)
		}
		upd.Spec.WorkerGroupSpecs = append(upd.Spec.WorkerGroupSpecs, added...)
		upd.Annotations[rayv1.NumWorkerGroupsKey] = strconv.Itoa(len(upd.Spec.WorkerGroupSpecs))
		upd.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey] = clusterHash(spec, -1)
	}
	rh := replicasHash(spec)
	switch have, ok := rc.Annotations[replicasHashKey]; {
	case !ok:
		// A cluster raydar did not create (KubeRay's): adopt its current
		// replicas, which the autoscaler may have set, and push only later
		// changes of the RayService.
		upd.Annotations[replicasHashKey] = rh
		what = append(what, "adopted")
	case have != rh:
		for i := range upd.Spec.WorkerGroupSpecs {
			g := &upd.Spec.WorkerGroupSpecs[i]
			want, ok := spec.WorkerGroup(g.GroupName)
			if !ok {
				continue
			}
			if !equality.Semantic.DeepEqual(g.Replicas, want.Replicas) || !equality.Semantic.DeepEqual(g.MinReplicas, want.MinReplicas) ||
				!equality.Semantic.DeepEqual(g.MaxReplicas, want.MaxReplicas) {
				g.Replicas, g.MinReplicas, g.MaxReplicas = copyInt32(want.Replicas), copyInt32(want.MinReplicas), copyInt32(want.MaxReplicas)
				what = append(what, "replicas of group "+g.GroupName)
			}
		}
		upd.Annotations[replicasHashKey] = rh
		if len(what) == 0 {
			what = append(what, "replicas hash")
		}
	}
	if !strings.HasPrefix(upd.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey], hashPrefix) {
		// A matching cluster KubeRay created: from now on compare by our hash.
		n := numWorkerGroups(upd)
		upd.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey] = clusterHash(spec, n)
		upd.Annotations[rayv1.NumWorkerGroupsKey] = strconv.Itoa(n)
		if len(what) == 0 {
			what = append(what, "adopted")
		}
	}
	if len(what) == 0 {
		return nil, nil
	}
	return upd, what
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// serveConfig is a RayService's serveConfigV2 in the form submitted to
// the dashboard, with its hash and the names of its applications.
type serveConfig struct {
	JSON []byte
	Hash string
	Apps []string // sorted
}

// parseServeConfig converts serveConfigV2; an empty config gives a zero
// serveConfig. The hash is taken over the JSON, so formatting and
// comments do not count as a change.
func parseServeConfig(serveConfigV2 string) (serveConfig, error) {
	if strings.TrimSpace(serveConfigV2) == "" {
		return serveConfig{}, nil
	}
	data, err := dashboard.ServeConfigV2ToJSON(serveConfigV2)
	if err != nil {
		return serveConfig{}, err
	}
	var doc struct {
		Applications []struct {
			Name *string `json:"name"`
		} `json:"applications"`
	}
	_ = json.Unmarshal(data, &doc)
	var canon any
	_ = json.Unmarshal(data, &canon)
	canonical, _ := json.Marshal(canon) // sorted keys
	sum := sha256.Sum256(canonical)
	c := serveConfig{JSON: data, Hash: hex.EncodeToString(sum[:])[:16]}
	for _, a := range doc.Applications {
		name := "default" // Ray's default application name
		if a.Name != nil {
			name = *a.Name
		}
		c.Apps = append(c.Apps, name)
	}
	sort.Strings(c.Apps)
	return c, nil
}

// servePort is the serve port of the cluster's head container (the port
// named "serve"), else 8000.
func servePort(rc *rayv1.RayCluster) int32 {
	if rc != nil {
		if p, ok := kit.ContainerPort(rc.Spec.HeadGroupSpec.Template.Spec, rayv1.ServingPortName); ok {
			return p
		}
	}
	return rayv1.DefaultServingPort
}

// headServiceLabels are the labels of a RayService's head Service, as
// KubeRay's BuildHeadServiceForRayService sets them (replacing the cluster
// head Service's): the originated-from pair, the node type and the
// identifier "<rayservice>-head". No ray.io/cluster: the selector says
// which cluster serves.
func headServiceLabels(rs *rayv1.RayService) map[string]string {
	l := originLabels(rs)
	l[rayv1.RayNodeTypeLabelKey] = string(rayv1.HeadNode)
	l[rayv1.RayIDLabelKey] = kit.KubeRayCheckLabel(rs.Name + "-" + string(rayv1.HeadNode))
	return l
}

// serveServiceLabels are the labels KubeRay's BuildServeService puts on
// a RayService's serve Service (over spec.serveService's own): the
// originated-from pair and ray.io/serve "<rayservice>-serve".
func serveServiceLabels(rs *rayv1.RayService) map[string]string {
	l := originLabels(rs)
	l[rayv1.RayClusterServingServiceLabelKey] = rs.Name + "-serve"
	return l
}

// formerServiceLabels are labels raydar used to put on a RayService's
// Services and KubeRay does not; an update removes them (ray.io/cluster
// would name a cluster that no longer serves).
var formerServiceLabels = []string{rayv1.RayClusterLabelKey, rayv1.KubernetesApplicationNameLabelKey, rayv1.KubernetesCreatedByLabelKey}

// buildHeadService is the RayService's head Service: the active
// cluster's head Service under the name "<rayservice>-head-svc", owned by
// the RayService.
func buildHeadService(rs *rayv1.RayService, active *rayv1.RayCluster, cfg raycluster.BuildConfig) *corev1.Service {
	svc := raycluster.BuildHeadService(active, cfg)
	svc.Name = kit.RayServiceHeadServiceName(rs)
	svc.Namespace = rs.Namespace
	svc.OwnerReferences = []metav1.OwnerReference{ownerRef(rs)}
	svc.Labels = headServiceLabels(rs)
	return svc
}

// buildServeService is the RayService's serve Service: spec.serveService
// when given (metadata and spec kept, selector always ours), selecting the
// active cluster's pods labelled ray.io/serve=true.
func buildServeService(rs *rayv1.RayService, active *rayv1.RayCluster) *corev1.Service {
	svc := &corev1.Service{}
	if o := rs.Spec.ServeService; o != nil {
		svc.Spec = *o.Spec.DeepCopy()
		svc.Labels = maps.Clone(o.Labels)
		svc.Annotations = maps.Clone(o.Annotations)
	}
	svc.Name = kit.RayServiceServeServiceName(rs)
	svc.Namespace = rs.Namespace
	svc.OwnerReferences = []metav1.OwnerReference{ownerRef(rs)}
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	maps.Copy(svc.Labels, serveServiceLabels(rs))
	svc.Spec.Selector = map[string]string{
		rayv1.RayClusterLabelKey:               active.Name,
		rayv1.RayClusterServingServiceLabelKey: "true",
	}
	// KubeRay v1.7.0's ports: the active cluster's head container ports
	// named "serve" or "serve-*"; a port of spec.serveService with the same
	// name replaces the detected one (keeping its appProtocol, say); with
	// none detected, spec.serveService's ports as given. The API server
	// fills protocol and targetPort.
	if auto := raycluster.ServePorts(&active.Spec); len(auto) > 0 {
		user := map[string]corev1.ServicePort{}
		for _, p := range svc.Spec.Ports {
			user[p.Name] = p
		}
		ports := make([]corev1.ServicePort, 0, len(auto))
		for _, p := range auto {
			if u, ok := user[p.Name]; ok {
				p = u
			}
			ports = append(ports, p)
		}
		svc.Spec.Ports = ports
	}
	if len(svc.Spec.Ports) == 0 {
		p := servePort(active)
		svc.Spec.Ports = []corev1.ServicePort{{Name: rayv1.ServingPortName, Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP}}
	}
	if svc.Spec.Type == "" {
		// KubeRay: the RayService's headGroupSpec.serviceType.
		svc.Spec.Type = rs.Spec.RayClusterSpec.HeadGroupSpec.ServiceType
	}
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	return svc
}

// serviceUpdate returns the existing Service changed to what desired
// asks (selector, ports, type, labels and annotations it sets), or nil when
// it already is. Fields the API server fills (clusterIP, nodePorts) are
// kept.
func serviceUpdate(existing, desired *corev1.Service) *corev1.Service {
	upd := existing.DeepCopy()
	changed := false
	if !equality.Semantic.DeepEqual(upd.Spec.Selector, desired.Spec.Selector) {
		upd.Spec.Selector = maps.Clone(desired.Spec.Selector)
		changed = true
	}
	if desired.Spec.Type != "" && upd.Spec.Type != desired.Spec.Type {
		upd.Spec.Type = desired.Spec.Type
		changed = true
	}
	if !portsEqual(upd.Spec.Ports, desired.Spec.Ports) {
		ports := make([]corev1.ServicePort, len(desired.Spec.Ports))
		copy(ports, desired.Spec.Ports)
		for i := range ports {
			for _, old := range upd.Spec.Ports {
				if old.Name == ports[i].Name && ports[i].NodePort == 0 {
					ports[i].NodePort = old.NodePort
				}
			}
		}
		upd.Spec.Ports = ports
		changed = true
	}
	if desired.Spec.PublishNotReadyAddresses != upd.Spec.PublishNotReadyAddresses {
		upd.Spec.PublishNotReadyAddresses = desired.Spec.PublishNotReadyAddresses
		changed = true
	}
	for _, k := range formerServiceLabels {
		if _, want := desired.Labels[k]; !want {
			if _, has := upd.Labels[k]; has {
				delete(upd.Labels, k)
				changed = true
			}
		}
	}
	for _, m := range []struct{ have, want *map[string]string }{{&upd.Labels, &desired.Labels}, {&upd.Annotations, &desired.Annotations}} {
		for k, v := range *m.want {
			if cur, ok := (*m.have)[k]; !ok || cur != v {
				if *m.have == nil {
					*m.have = map[string]string{}
				}
				(*m.have)[k] = v
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	return upd
}

func portsEqual(a, b []corev1.ServicePort) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		px, py := x.Protocol, y.Protocol
		if px == "" {
			px = corev1.ProtocolTCP
		}
		if py == "" {
			py = corev1.ProtocolTCP
		}
		if x.Name != y.Name || x.Port != y.Port || px != py || x.TargetPort.String() != y.TargetPort.String() && y.TargetPort.String() != "0" {
			return false
		}
	}
	return true
}

// deleteAfter parses a cluster's delete-after annotation.
func deleteAfter(rc *rayv1.RayCluster) (time.Time, bool) {
	v, ok := rc.Annotations[DeleteAfterKey]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, true // unreadable: due now
	}
	return t, true
}
