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
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/raydar/raydar/rayapi/dashboard"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The RayService reconciler's annotations on its clusters; rayapi/v1 is
// their home (see there for what each holds).
const (
	RsServeConfigHashKey = rayv1.ServeConfigHashAnnotationKey
	RsDeleteAfterKey     = rayv1.DeleteAfterAnnotationKey
	rsReplicasHashKey    = rayv1.RayServiceReplicasHashAnnotationKey
)

// rsHashPrefix marks the cluster-spec hashes raydar writes into
// ray.io/hash-without-replicas-and-workers-to-delete, to tell them from
// KubeRay's (which are computed differently).
const rsHashPrefix = "rd1-"

// rsStripForHash removes from a cluster spec everything a RayService
// upgrade ignores: per group replicas, minReplicas, maxReplicas,
// workersToDelete (scaleStrategy) and suspend; tolerations and
// schedulingGates of every pod template; the cluster's upgradeStrategy,
// suspend and managedBy; and the ray.io/serve labels raydar before
// v1.7-conformance put on the pod templates (clusters it made then keep
// their hash). Only the first n worker groups are kept (n < 0: all).
func rsStripForHash(spec *rayv1.RayClusterSpec, n int) *rayv1.RayClusterSpec {
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

// rsClusterHash is raydar's hash of a cluster spec for upgrades, over its
// first n worker groups (n < 0: all), without the fields rsStripForHash
// removes.
func rsClusterHash(spec *rayv1.RayClusterSpec, n int) string {
	b, _ := json.Marshal(rsStripForHash(spec, n))
	sum := sha256.Sum256(b)
	return rsHashPrefix + hex.EncodeToString(sum[:])[:20]
}

// rsReplicasHash hashes replicas, minReplicas and maxReplicas of every
// worker group of the RayService's cluster config.
func rsReplicasHash(spec *rayv1.RayClusterSpec) string {
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

// rsNumWorkerGroups is the number of worker groups the cluster's hash
// covers: the ray.io/num-worker-groups annotation, else its group count.
func rsNumWorkerGroups(rc *rayv1.RayCluster) int {
	if n, err := strconv.Atoi(rc.Annotations[rayv1.NumWorkerGroupsKey]); err == nil && n >= 0 {
		return n
	}
	return len(rc.Spec.WorkerGroupSpecs)
}

// rsMatch says how a cluster relates to the RayService's cluster config.
type rsMatch int

const (
	// rsMismatch: the cluster must be replaced to follow the spec.
	rsMismatch rsMatch = iota
	// rsMatches: same spec up to the ignored fields; replica changes and
	// worker groups appended at the end apply in place.
	rsMatches
)

// rsClusterMatches compares a cluster with the RayService's cluster config.
// Clusters raydar created carry its hash; a cluster created by KubeRay
// (whose hash is computed differently) is compared by hashing its live spec.
func rsClusterMatches(rc *rayv1.RayCluster, spec *rayv1.RayClusterSpec) rsMatch {
	n := rsNumWorkerGroups(rc)
	if n > len(spec.WorkerGroupSpecs) {
		return rsMismatch // groups were removed
	}
	want := rsClusterHash(spec, n)
	have := rc.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey]
	if !strings.HasPrefix(have, rsHashPrefix) {
		have = rsClusterHash(&rc.Spec, n)
	}
	if have == want {
		return rsMatches
	}
	return rsMismatch
}

// rsOwnerRef is the controller owner reference of a RayService's children.
func rsOwnerRef(rs *rayv1.RayService) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayService,
		Name: rs.Name, UID: rs.UID, Controller: &t, BlockOwnerDeletion: &t,
	}
}

// rsOwnedBy reports whether obj's controller is the RayService.
func rsOwnedBy(obj metav1.Object, rs *rayv1.RayService) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller && r.UID == rs.UID {
			return true
		}
	}
	return false
}

// rsOriginLabels are the labels that tie a child to its RayService.
func rsOriginLabels(rs *rayv1.RayService) map[string]string {
	return map[string]string{
		rayv1.RayOriginatedFromCRNameLabelKey: rs.Name,
		rayv1.RayOriginatedFromCRDLabelKey:    rayv1.RayOriginatedFromCRDLabelValue(rayv1.KindRayService),
	}
}

// rsBuildCluster builds a new RayCluster of the RayService.
func rsBuildCluster(rs *rayv1.RayService, name string) *rayv1.RayCluster {
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
	maps.Copy(labels, rsOriginLabels(rs))
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
	ann[rayv1.HashWithoutReplicasAndWorkersToDeleteKey] = rsClusterHash(&rs.Spec.RayClusterSpec, -1)
	ann[rayv1.NumWorkerGroupsKey] = strconv.Itoa(len(spec.WorkerGroupSpecs))
	ann[rsReplicasHashKey] = rsReplicasHash(&rs.Spec.RayClusterSpec)
	return &rayv1.RayCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayCluster},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: rs.Namespace, Labels: labels, Annotations: ann,
			OwnerReferences: []metav1.OwnerReference{rsOwnerRef(rs)},
		},
		Spec: *spec,
	}
}

// rsInPlaceUpdate applies to a matching cluster what a RayService changes
// without a new cluster: worker groups appended at the end, and replicas,
// minReplicas and maxReplicas when the RayService's values changed since
// they were last applied. It returns the updated copy and what changed, or
// nil when nothing did.
func rsInPlaceUpdate(rc *rayv1.RayCluster, rs *rayv1.RayService) (*rayv1.RayCluster, []string) {
	spec := &rs.Spec.RayClusterSpec
	upd := rc.DeepCopy()
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	var what []string
	n := rsNumWorkerGroups(rc)
	if len(spec.WorkerGroupSpecs) > n && len(upd.Spec.WorkerGroupSpecs) == n {
		added := spec.DeepCopy().WorkerGroupSpecs[n:]
		for _, g := range added {
			what = append(what, "added worker group "+g.GroupName)
		}
		upd.Spec.WorkerGroupSpecs = append(upd.Spec.WorkerGroupSpecs, added...)
		upd.Annotations[rayv1.NumWorkerGroupsKey] = strconv.Itoa(len(upd.Spec.WorkerGroupSpecs))
		upd.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey] = rsClusterHash(spec, -1)
	}
	rh := rsReplicasHash(spec)
	switch have, ok := rc.Annotations[rsReplicasHashKey]; {
	case !ok:
		// A cluster raydar did not create (KubeRay's): adopt its current
		// replicas, which the autoscaler may have set, and push only later
		// changes of the RayService.
		upd.Annotations[rsReplicasHashKey] = rh
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
		upd.Annotations[rsReplicasHashKey] = rh
		if len(what) == 0 {
			what = append(what, "replicas hash")
		}
	}
	if !strings.HasPrefix(upd.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey], rsHashPrefix) {
		// A matching cluster KubeRay created: from now on compare by our hash.
		n := rsNumWorkerGroups(upd)
		upd.Annotations[rayv1.HashWithoutReplicasAndWorkersToDeleteKey] = rsClusterHash(spec, n)
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

// rsServeConfig is a RayService's serveConfigV2 in the form submitted to
// the dashboard, with its hash and the names of its applications.
type rsServeConfig struct {
	JSON []byte
	Hash string
	Apps []string // sorted
}

// rsParseServeConfig converts serveConfigV2; an empty config gives a zero
// rsServeConfig. The hash is taken over the JSON, so formatting and
// comments do not count as a change.
func rsParseServeConfig(serveConfigV2 string) (rsServeConfig, error) {
	if strings.TrimSpace(serveConfigV2) == "" {
		return rsServeConfig{}, nil
	}
	data, err := dashboard.ServeConfigV2ToJSON(serveConfigV2)
	if err != nil {
		return rsServeConfig{}, err
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
	c := rsServeConfig{JSON: data, Hash: hex.EncodeToString(sum[:])[:16]}
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

// rsServePort is the serve port of the cluster's head container (the port
// named "serve"), else 8000.
func rsServePort(rc *rayv1.RayCluster) int32 {
	if rc != nil {
		if p, ok := kit.ContainerPort(rc.Spec.HeadGroupSpec.Template.Spec, rayv1.ServingPortName); ok {
			return p
		}
	}
	return rayv1.DefaultServingPort
}

// rsHeadServiceLabels are the labels of a RayService's head Service, as
// KubeRay's BuildHeadServiceForRayService sets them (replacing the cluster
// head Service's): the originated-from pair, the node type and the
// identifier "<rayservice>-head". No ray.io/cluster: the selector says
// which cluster serves.
func rsHeadServiceLabels(rs *rayv1.RayService) map[string]string {
	l := rsOriginLabels(rs)
	l[rayv1.RayNodeTypeLabelKey] = string(rayv1.HeadNode)
	l[rayv1.RayIDLabelKey] = kit.KubeRayCheckLabel(rs.Name + "-" + string(rayv1.HeadNode))
	return l
}

// rsServeServiceLabels are the labels KubeRay's BuildServeService puts on
// a RayService's serve Service (over spec.serveService's own): the
// originated-from pair and ray.io/serve "<rayservice>-serve".
func rsServeServiceLabels(rs *rayv1.RayService) map[string]string {
	l := rsOriginLabels(rs)
	l[rayv1.RayClusterServingServiceLabelKey] = rs.Name + "-serve"
	return l
}

// rsFormerServiceLabels are labels raydar used to put on a RayService's
// Services and KubeRay does not; an update removes them (ray.io/cluster
// would name a cluster that no longer serves).
var rsFormerServiceLabels = []string{rayv1.RayClusterLabelKey, rayv1.KubernetesApplicationNameLabelKey, rayv1.KubernetesCreatedByLabelKey}

// rsBuildHeadService is the RayService's head Service: the active
// cluster's head Service under the name "<rayservice>-head-svc", owned by
// the RayService.
func rsBuildHeadService(rs *rayv1.RayService, active *rayv1.RayCluster, cfg raycluster.BuildConfig) *corev1.Service {
	svc := raycluster.BuildHeadService(active, cfg)
	svc.Name = kit.RayServiceHeadServiceName(rs)
	svc.Namespace = rs.Namespace
	svc.OwnerReferences = []metav1.OwnerReference{rsOwnerRef(rs)}
	svc.Labels = rsHeadServiceLabels(rs)
	return svc
}

// rsBuildServeService is the RayService's serve Service: spec.serveService
// when given (metadata and spec kept, selector always ours), selecting the
// active cluster's pods labelled ray.io/serve=true.
func rsBuildServeService(rs *rayv1.RayService, active *rayv1.RayCluster) *corev1.Service {
	svc := &corev1.Service{}
	if o := rs.Spec.ServeService; o != nil {
		svc.Spec = *o.Spec.DeepCopy()
		svc.Labels = maps.Clone(o.Labels)
		svc.Annotations = maps.Clone(o.Annotations)
	}
	svc.Name = kit.RayServiceServeServiceName(rs)
	svc.Namespace = rs.Namespace
	svc.OwnerReferences = []metav1.OwnerReference{rsOwnerRef(rs)}
	if svc.Labels == nil {
		svc.Labels = map[string]string{}
	}
	maps.Copy(svc.Labels, rsServeServiceLabels(rs))
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
		p := rsServePort(active)
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

// rsServiceUpdate returns the existing Service changed to what desired
// asks (selector, ports, type, labels and annotations it sets), or nil when
// it already is. Fields the API server fills (clusterIP, nodePorts) are
// kept.
func rsServiceUpdate(existing, desired *corev1.Service) *corev1.Service {
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
	if !rsPortsEqual(upd.Spec.Ports, desired.Spec.Ports) {
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
	for _, k := range rsFormerServiceLabels {
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

func rsPortsEqual(a, b []corev1.ServicePort) bool {
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

// rsDeleteAfter parses a cluster's delete-after annotation.
func rsDeleteAfter(rc *rayv1.RayCluster) (time.Time, bool) {
	v, ok := rc.Annotations[RsDeleteAfterKey]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, true // unreadable: due now
	}
	return t, true
}
