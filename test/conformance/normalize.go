package conformance

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is one normalised object of one side: its identity within the
// manifest's namespace ("Pod raycluster-kuberay-head-#####") and the
// content that is compared.
type Object struct {
	ID      string
	Content map[string]any
}

// Placeholders that stand for what differs between two runs by nature.
const (
	nsPlaceholder     = "NS"
	suffixPlaceholder = "-#####"
	timePlaceholder   = "<time>"
	uidPlaceholder    = "<uid>"
	nodePortValue     = "<nodePort>"
)

var (
	// generatedSuffix is a random name suffix as the API server's
	// generateName and apimachinery's rand.String make it: five characters
	// from an alphabet without vowels, so real words are rarely hit.
	generatedSuffix = regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)
	// uuid is an object's UID wherever it is copied (GCS FT's external
	// storage namespace defaults to the RayCluster's UID).
	uuid    = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	rfc3339 = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// keyedLists are the lists whose order is not part of their meaning (or
// whose order is compared separately): they are compared as maps keyed by
// the given field, so a difference names the entry ("env[RAY_ADDRESS]")
// rather than an index that shifts.
var keyedLists = map[string]string{
	"containers":     "name",
	"initContainers": "name",
	"env":            "name",
	"ports":          "name",
	"volumes":        "name",
	"volumeMounts":   "mountPath",
	"conditions":     "type",
}

// orderedLists are keyed lists whose order matters: their order is kept as
// a sibling "<name>Order" field ("ray-head,autoscaler").
// env is one of them: Kubernetes expands $(VAR) in a value only from the
// entries above it, so the order of env is behaviour.
var orderedLists = map[string]bool{"containers": true, "initContainers": true, "env": true}

// Normalize turns the objects found in one namespace into comparable
// Objects: everything an operator decides is kept (metadata labels,
// annotations, owners and finalizers; spec; status), less what differs by
// nature. Which objects to pass is the caller's choice (the suite leaves out
// what the manifest itself created, except its Ray objects).
func Normalize(namespace string, objs []unstructured.Unstructured) []Object {
	out := make([]Object, 0, len(objs))
	ticks := cronTicks(objs)
	ident := identityFacts(objs)
	for i := range objs {
		u := &objs[i]
		m := runtime.DeepCopyJSON(u.UnstructuredContent())
		if ticks != nil {
			m = replaceAll(m, ticks.Replace).(map[string]any)
		}
		if ident != nil {
			m = replaceAll(m, ident).(map[string]any)
		}
		kind := u.GetKind()
		normalizeObject(kind, m)
		v := replaceStrings(m, namespace)
		m = v.(map[string]any)
		dropEmpty(m)
		name := u.GetName()
		if ticks != nil {
			name = ticks.Replace(name)
		}
		if ident != nil {
			name = ident(name)
		}
		name = normalizeString(name, namespace)
		out = append(out, Object{ID: kind + " " + name, Content: m})
	}
	return disambiguate(out)
}

// cronTickLabel names the RayCronJob that made a RayJob, and
// cronTickAnnotation the tick it was made for (RFC 3339).
const (
	cronTickLabel      = "ray.io/cronjob-name"
	cronTickAnnotation = "ray.io/cronjob-scheduled-timestamp"
)

// duplicateTick marks a RayJob made for a tick that already has one.
const duplicateTick = "-duplicate"

// cronTicks replaces the names of RayJobs a RayCronJob made by
// "<cronjob>-tick<N>", N counting the distinct ticks of that RayCronJob in
// time order: KubeRay v1.6.2 names them <cronjob>-<5 random characters>
// (raycronjob_controller.go:158), v1.7.0 and raydar <cronjob>-<minutes since
// the epoch of the tick> (v1.7.0's raycronjob_controller.go:167,
// getRayJobName), so the name says nothing comparable but the tick does. A
// second RayJob for a tick that already has one (the older by creation
// keeps the tick's name) is "<cronjob>-tick<N>-duplicate<K>": v1.7.0's
// per-minute names make that impossible (the second create is
// AlreadyExists), v1.6.2's random ones do not. The replacement runs over
// every string, so the RayJob's cluster, pods and submitter carry the same
// name. nil when objs has no such RayJob.
func cronTicks(objs []unstructured.Unstructured) *strings.Replacer {
	type tick struct {
		name, cron, at string
		created        time.Time
	}
	var ticks []tick
	for _, o := range objs {
		cron := o.GetLabels()[cronTickLabel]
		if o.GetKind() != "RayJob" || cron == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(o.GetName(), cron+"-"); !ok || rest == "" {
			continue
		}
		ticks = append(ticks, tick{name: o.GetName(), cron: cron, at: o.GetAnnotations()[cronTickAnnotation], created: o.GetCreationTimestamp().Time})
	}
	if ticks == nil {
		return nil
	}
	// RFC 3339 in UTC sorts as text.
	slices.SortStableFunc(ticks, func(a, b tick) int {
		return cmp.Or(strings.Compare(a.cron, b.cron), strings.Compare(a.at, b.at), a.created.Compare(b.created), strings.Compare(a.name, b.name))
	})
	var pairs []string
	n, dup := 0, 0
	for i, t := range ticks {
		switch {
		case i > 0 && t.cron == ticks[i-1].cron && t.at == ticks[i-1].at:
			dup++
		case i > 0 && t.cron == ticks[i-1].cron:
			n, dup = n+1, 0
		default:
			n, dup = 1, 0
		}
		to := fmt.Sprintf("%s-tick%d", t.cron, n)
		if dup > 0 {
			to += fmt.Sprintf("%s%d", duplicateTick, dup)
		}
		pairs = append(pairs, t.name, to)
	}
	return strings.NewReplacer(pairs...)
}

// replaceAll applies r to every string and map key of v.
func replaceAll(v any, r func(string) string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, c := range t {
			out[r(k)] = replaceAll(c, r)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = replaceAll(c, r)
		}
		return out
	case string:
		return r(t)
	}
	return v
}

// Placeholders of identityFacts.
const (
	uidPrefixPlaceholder = "<uid[:8]>"
	podIPPlaceholder     = "<pod IP>"
)

// identityFacts replaces, in every string, what mTLS copies from the
// identity of a namespace's objects: the first eight characters of a
// RayCluster's UID (KubeRay v1.7.0 names the CA Secret
// <cluster>-ca-secret-<uid[:8]>, utils/util.go:819-822) and the pods' IPs
// (the leaf Certificates' ipAddresses and their Secrets'
// cert-manager.io/ip-sans), which differ between the two sides by nature.
// An IP is replaced only as a whole address. nil when objs has neither.
func identityFacts(objs []unstructured.Unstructured) func(string) string {
	var prefixes []string
	podIPs := map[string]bool{}
	for i := range objs {
		u := &objs[i]
		switch u.GetKind() {
		case "RayCluster":
			if uid := string(u.GetUID()); len(uid) >= 8 {
				prefixes = append(prefixes, regexp.QuoteMeta(uid[:8]))
			}
		case "Pod":
			if ip, _, _ := unstructured.NestedString(u.Object, "status", "podIP"); ip != "" {
				podIPs[ip] = true
			}
		}
	}
	if len(prefixes) == 0 && len(podIPs) == 0 {
		return nil
	}
	var uidRe *regexp.Regexp
	if len(prefixes) > 0 {
		uidRe = regexp.MustCompile(`(^|[^0-9a-f])(` + strings.Join(prefixes, "|") + `)($|[^0-9a-f-])`)
	}
	return func(s string) string {
		if uidRe != nil {
			s = uidRe.ReplaceAllString(s, "${1}"+uidPrefixPlaceholder+"${3}")
		}
		if len(podIPs) > 0 {
			s = dottedQuad.ReplaceAllStringFunc(s, func(ip string) string {
				if podIPs[ip] {
					return podIPPlaceholder
				}
				return ip
			})
		}
		return s
	}
}

// dottedQuad matches a run of dot-separated numbers whole, so an address
// is looked up as written: 10.0.0.40 is never read as 10.0.0.4.
var dottedQuad = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)+`)

// issuedByCertManager reports whether a Secret was written by cert-manager
// for a Certificate (its cert-manager.io/certificate-name annotation).
func issuedByCertManager(m map[string]any) bool {
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	_, ok := ann["cert-manager.io/certificate-name"]
	return ok
}

// disambiguate numbers objects whose IDs are equal after normalisation
// (the workers of one group): sorted by content, so that equal pods pair up
// whatever their names were.
func disambiguate(objs []Object) []Object {
	byID := map[string][]int{}
	for i, o := range objs {
		byID[o.ID] = append(byID[o.ID], i)
	}
	for id, idx := range byID {
		if len(idx) < 2 {
			continue
		}
		sort.SliceStable(idx, func(a, b int) bool { return canonical(objs[idx[a]].Content) < canonical(objs[idx[b]].Content) })
		for n, i := range idx {
			objs[i].ID = fmt.Sprintf("%s#%d", id, n+1)
		}
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].ID < objs[j].ID })
	return objs
}

func canonical(v any) string {
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// normalizeObject removes what differs by nature and keeps what an
// operator decides.
func normalizeObject(kind string, m map[string]any) {
	meta, _ := m["metadata"].(map[string]any)
	generation, _ := meta["generation"].(int64)
	keep := map[string]any{}
	for _, k := range []string{"labels", "annotations", "ownerReferences", "finalizers"} {
		if v, ok := meta[k]; ok {
			keep[k] = v
		}
	}
	if a, ok := keep["annotations"].(map[string]any); ok {
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) == 0 {
			delete(keep, "annotations")
		}
	}
	if refs, ok := keep["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if rm, ok := r.(map[string]any); ok {
				delete(rm, "uid")
			}
		}
	}
	m["metadata"] = keep
	delete(m, "apiVersion")
	delete(m, "kind")

	spec, _ := m["spec"].(map[string]any)
	status, _ := m["status"].(map[string]any)
	switch kind {
	case "Pod":
		delete(spec, "nodeName")
		// Pod status is kwok's; only the phase says something about the
		// operator (a pod it should have replaced).
		m["status"] = map[string]any{"phase": status["phase"]}
	case "Service":
		if ip, _ := spec["clusterIP"].(string); ip != "None" {
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		for _, p := range asList(spec["ports"]) {
			if pm, ok := p.(map[string]any); ok {
				delete(pm, "nodePort")
			}
		}
		delete(m, "status")
	case "Job":
		delete(spec, "selector")
		if t, ok := spec["template"].(map[string]any); ok {
			if tm, ok := t["metadata"].(map[string]any); ok {
				if l, ok := tm["labels"].(map[string]any); ok {
					for _, k := range []string{"batch.kubernetes.io/controller-uid", "controller-uid", "batch.kubernetes.io/job-name", "job-name"} {
						delete(l, k)
					}
				}
			}
		}
		delete(m, "status")
	case "Secret":
		if data, ok := m["data"].(map[string]any); ok {
			for k, v := range data {
				if issuedByCertManager(m) {
					// Key material cert-manager (the sandbox's certsim)
					// generated for a Certificate: its size varies by a few
					// bytes per issue (RSA PEM), and no operator chose it.
					data[k] = "<issued by cert-manager>"
					continue
				}
				s, _ := v.(string)
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					data[k] = "<undecodable>"
					continue
				}
				data[k] = fmt.Sprintf("<%d bytes>", len(b))
			}
		}
	case "RayCluster", "RayJob", "RayService", "RayCronJob":
		normalizeRayStatus(status, generation)
	default:
		delete(m, "status")
	}
}

// normalizeRayStatus drops what differs by nature in a Ray object's status:
// addresses, free-text messages, timestamps (replaced later).
func normalizeRayStatus(status map[string]any, generation int64) {
	if status == nil {
		return
	}
	// Operators bump the generation differently (KubeRay rewrites the whole
	// object to add a finalizer); what a reader learns from
	// observedGeneration is whether the status is current.
	if og, ok := status["observedGeneration"].(int64); ok {
		if og == generation {
			status["observedGeneration"] = "current"
		} else {
			status["observedGeneration"] = "behind"
		}
	}
	// The same for each condition's observedGeneration.
	if conds, ok := status["conditions"].([]any); ok {
		for _, c := range conds {
			if cm, ok := c.(map[string]any); ok {
				if og, ok := cm["observedGeneration"].(int64); ok {
					if og == generation {
						cm["observedGeneration"] = "current"
					} else {
						cm["observedGeneration"] = "behind"
					}
				}
			}
		}
	}
	// A NodePort is the API server's random pick.
	if ep, ok := status["endpoints"].(map[string]any); ok {
		for k, v := range ep {
			if s, _ := v.(string); len(s) == 5 && s >= "30000" && s <= "32767" {
				ep[k] = nodePortValue
			}
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			// Also inside the copies of a cluster's status that RayJob
			// and RayService statuses hold.
			for _, k := range []string{"message", "lastTransitionTime", "podIP", "serviceIP"} {
				delete(t, k)
			}
			for _, c := range t {
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(status)
}

// dropEmpty removes empty objects: KubeRay writes whole objects back with
// Go's encoding, which turns an absent struct into {}; the API reads both
// the same.
func dropEmpty(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case map[string]any:
			dropEmpty(t)
			if len(t) == 0 {
				delete(m, k)
			}
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					dropEmpty(em)
				}
			}
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// replaceStrings walks v: lists become maps where keyedLists says so, and
// every string has the namespace, random suffixes and timestamps replaced.
func replaceStrings(v any, namespace string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, c := range t {
			nk := normalizeString(k, namespace)
			if key, ok := keyedLists[k]; ok {
				if l, ok := c.([]any); ok {
					if km, order, ok := keyList(l, key, namespace); ok {
						out[nk] = km
						if orderedLists[k] {
							out[k+"Order"] = strings.Join(order, ",")
						}
						continue
					}
				}
			}
			out[nk] = replaceStrings(c, namespace)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = replaceStrings(c, namespace)
		}
		return out
	case string:
		return normalizeString(t, namespace)
	}
	return v
}

// keyList turns a list of objects into a map by their key field; false when
// an element has no such key or keys repeat.
func keyList(l []any, key, namespace string) (map[string]any, []string, bool) {
	out := make(map[string]any, len(l))
	order := make([]string, 0, len(l))
	for _, e := range l {
		em, ok := e.(map[string]any)
		if !ok {
			return nil, nil, false
		}
		k, ok := em[key].(string)
		if !ok {
			return nil, nil, false
		}
		k = normalizeString(k, namespace)
		if _, dup := out[k]; dup {
			return nil, nil, false
		}
		out[k] = replaceStrings(em, namespace)
		order = append(order, k)
	}
	return out, order, true
}

// normalizeString replaces the namespace (as a whole DNS label), random
// name suffixes and RFC 3339 timestamps.
func normalizeString(s, namespace string) string {
	if namespace != "" && strings.Contains(s, namespace) {
		s = nsPattern(namespace).ReplaceAllString(s, "${1}"+nsPlaceholder+"${2}")
	}
	s = generatedSuffix.ReplaceAllString(s, suffixPlaceholder)
	s = uuid.ReplaceAllString(s, uidPlaceholder)
	return rfc3339.ReplaceAllString(s, timePlaceholder)
}

var nsPatterns sync.Map // namespace -> *regexp.Regexp

// nsPattern matches ns as a whole DNS label, keeping what stands either
// side in groups 1 and 2.
func nsPattern(ns string) *regexp.Regexp {
	if re, ok := nsPatterns.Load(ns); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(^|[^a-z0-9-])` + regexp.QuoteMeta(ns) + `($|[^a-z0-9-])`)
	nsPatterns.Store(ns, re)
	return re
}

// sortedIDs lists the IDs of objs.
func sortedIDs(objs []Object) []string {
	ids := make([]string, 0, len(objs))
	for _, o := range objs {
		ids = append(ids, o.ID)
	}
	slices.Sort(ids)
	return ids
}
