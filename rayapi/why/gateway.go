package why

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// GatewayInput is what was read of the Gateway API objects a RayService
// with NewClusterWithIncrementalUpgrade moves its traffic through: the
// Gateway and HTTPRoute its reconciler makes (GatewayName, HTTPRouteName)
// and the GatewayClass its clusterUpgradeOptions name.
type GatewayInput struct {
	// NoAPI: the Gateway API is not installed in the cluster (its CRDs are
	// absent); nothing else was read.
	NoAPI bool
	// Class is the GatewayClass named by
	// spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName; nil when
	// there is none of that name.
	Class *gwv1.GatewayClass
	// Classes are the names of the GatewayClasses there are, for the fix
	// of a wrong name; nil when they could not be listed.
	Classes []string
	// Gateway and Route are the service's; nil when they do not exist
	// (yet).
	Gateway *gwv1.Gateway
	Route   *gwv1.HTTPRoute
}

// incrementalOptions are the service's clusterUpgradeOptions when its
// upgrade strategy is NewClusterWithIncrementalUpgrade; nil otherwise.
func incrementalOptions(s *rayv1.RayService) *rayv1.ClusterUpgradeOptions {
	us := s.Spec.UpgradeStrategy
	if us == nil || us.Type == nil || *us.Type != rayv1.NewClusterWithIncrementalUpgrade || us.ClusterUpgradeOptions == nil {
		return nil
	}
	return us.ClusterUpgradeOptions
}

// gatewayCauses: what holds the Gateway API side of an incremental
// upgrade, the first that holds of: no Gateway API in the cluster, no
// GatewayClass of the name asked, the Gateway not Accepted or not
// Programmed, the HTTPRoute not Accepted by it or its backends not
// resolved. These are the checks KubeRay makes before it moves traffic or
// target capacity (utils.IsGatewayReady, utils.IsHTTPRouteReady:
// ray-operator/controllers/ray/utils/util.go:781-833; used by
// checkIfNeedTargetCapacityUpdate, rayservice_controller.go:1401-1424). A
// later one is a consequence of an earlier one and is not said with it.
func gatewayCauses(o object, s *rayv1.RayService, g *GatewayInput, cs []Cause) []Cause {
	opts := incrementalOptions(s)
	if g == nil || opts == nil {
		return cs
	}
	class := opts.GatewayClassName
	strategy := "spec.upgradeStrategy.type is " + string(rayv1.NewClusterWithIncrementalUpgrade)
	if g.NoAPI {
		return append(cs, Cause{Code: CodeGatewayAPIMissing, Subject: o.subject(), Rank: rankGateway,
			Summary:  "no Gateway API in this cluster: the incremental upgrade has no Gateway to move traffic through",
			Evidence: []string{strategy + ", which routes traffic through a Gateway and an HTTPRoute", "the API server serves no gateway.networking.k8s.io/v1 Gateway (the Gateway API CRDs are not installed)"},
			Fix: "install the Gateway API CRDs and an implementation that provides GatewayClass " + class +
				" (e.g. Envoy Gateway, Istio), or use spec.upgradeStrategy.type NewCluster"})
	}
	if g.Class == nil {
		ev := []string{"spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName is " + class}
		fix := "install a Gateway API implementation that provides GatewayClass " + class + ", or fix gatewayClassName"
		switch {
		case g.Classes == nil:
		case len(g.Classes) == 0:
			ev = append(ev, "there is no GatewayClass at all: no Gateway API implementation is installed")
			fix = "install a Gateway API implementation (e.g. Envoy Gateway, Istio) that provides GatewayClass " + class
		default:
			ev = append(ev, "GatewayClasses here: "+strings.Join(g.Classes, ", "))
			fix += " to one of " + strings.Join(g.Classes, ", ")
		}
		return append(cs, Cause{Code: CodeGatewayClassMissing, Subject: "GatewayClass " + class, Rank: rankGateway,
			Summary:  "no GatewayClass " + class + ": no Gateway API implementation serves the upgrade's Gateway",
			Evidence: ev, Fix: fix})
	}
	gwName := s.Namespace + "/" + s.GatewayName()
	if g.Gateway == nil {
		if hasCode(cs, CodeWriteFailed) || hasCode(cs, CodeCreateRefused) {
			return cs // the failed write says why
		}
		return append(cs, Cause{Code: CodeGatewayNotReady, Subject: "Gateway " + gwName, Rank: rankGateway,
			Summary:  "Gateway " + s.GatewayName() + " not created yet",
			Evidence: []string{"there is no Gateway " + gwName},
			Fix:      "the reconciler creates it for " + strategy + "; if it stays missing, see the RayService's Events and who reconciles it"})
	}
	if ev, summary, ok := gatewayNotReady(g.Gateway); ok {
		return append(cs, Cause{Code: CodeGatewayNotReady, Subject: "Gateway " + gwName, Rank: rankGateway,
			Summary:  "Gateway " + s.GatewayName() + " " + summary,
			Evidence: ev,
			Fix: "look at the controller of GatewayClass " + class + " (its logs, kubectl describe gateway " + s.GatewayName() + " -n " + s.Namespace +
				"); no traffic moves until the Gateway is Accepted and Programmed"})
	}
	rtName := s.Namespace + "/" + s.HTTPRouteName()
	if g.Route == nil {
		if hasCode(cs, CodeWriteFailed) || hasCode(cs, CodeCreateRefused) {
			return cs
		}
		return append(cs, Cause{Code: CodeHTTPRouteNotAccepted, Subject: "HTTPRoute " + rtName, Rank: rankRoute,
			Summary:  "HTTPRoute " + s.HTTPRouteName() + " not created yet",
			Evidence: []string{"there is no HTTPRoute " + rtName},
			Fix:      "the reconciler creates it once the Gateway and the active cluster exist; if it stays missing, see the RayService's Events"})
	}
	if ev, summary, ok := routeNotAccepted(g.Route, g.Gateway); ok {
		return append(cs, Cause{Code: CodeHTTPRouteNotAccepted, Subject: "HTTPRoute " + rtName, Rank: rankRoute,
			Summary:  "HTTPRoute " + s.HTTPRouteName() + " " + summary,
			Evidence: ev,
			Fix: "read the route's condition message (kubectl describe httproute " + s.HTTPRouteName() + " -n " + s.Namespace +
				"): its backends are the clusters' serve Services; no traffic moves until it is Accepted with its references resolved"})
	}
	return cs
}

// gatewayNotReady: the Gateway's Accepted or Programmed condition is not
// True (absent: no controller has looked at it); its reason and message
// quoted.
func gatewayNotReady(gw *gwv1.Gateway) (evidence []string, summary string, ok bool) {
	for _, t := range []gwv1.GatewayConditionType{gwv1.GatewayConditionAccepted, gwv1.GatewayConditionProgrammed} {
		c := meta.FindStatusCondition(gw.Status.Conditions, string(t))
		if c != nil && c.Status == metav1.ConditionTrue {
			continue
		}
		word := "not " + strings.ToLower(string(t))
		if c == nil {
			return []string{"Gateway " + gw.Namespace + "/" + gw.Name + ": no " + string(t) + " condition: no Gateway controller has taken it"},
				word + ": no controller has taken it", true
		}
		return []string{"Gateway " + gw.Namespace + "/" + gw.Name + ": " + condWords(c)}, word + ": " + reasonWords(c), true
	}
	return nil, "", false
}

// routeNotAccepted: the HTTPRoute's status for the Gateway (its parent)
// is missing, or its Accepted or ResolvedRefs condition is not True.
func routeNotAccepted(rt *gwv1.HTTPRoute, gw *gwv1.Gateway) (evidence []string, summary string, ok bool) {
	name := "HTTPRoute " + rt.Namespace + "/" + rt.Name
	for _, p := range rt.Status.Parents {
		if string(p.ParentRef.Name) != gw.Name || p.ParentRef.Namespace != nil && string(*p.ParentRef.Namespace) != gw.Namespace {
			continue
		}
		for _, t := range []gwv1.RouteConditionType{gwv1.RouteConditionAccepted, gwv1.RouteConditionResolvedRefs} {
			c := meta.FindStatusCondition(p.Conditions, string(t))
			if c != nil && c.Status == metav1.ConditionTrue {
				continue
			}
			word := "not accepted"
			if t == gwv1.RouteConditionResolvedRefs {
				word = "references not resolved"
			}
			if c == nil {
				return []string{name + ": no " + string(t) + " condition for Gateway " + gw.Name}, word, true
			}
			return []string{name + " on Gateway " + gw.Name + ": " + condWords(c)}, word + ": " + reasonWords(c), true
		}
		return nil, "", false
	}
	return []string{name + ": no status for its parent Gateway " + gw.Name + ": the Gateway's controller has not taken the route"},
		"not accepted: the Gateway's controller has not taken it", true
}

// condWords is a condition as kubectl describe says it: "Programmed=False
// (AddressNotAssigned): no address assigned".
func condWords(c *metav1.Condition) string {
	s := c.Type + "=" + string(c.Status)
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if m := strings.TrimSpace(c.Message); m != "" {
		s += ": " + m
	}
	return s
}

// reasonWords is a condition's reason with its message cut short:
// "AddressNotAssigned (no address assigned)".
func reasonWords(c *metav1.Condition) string {
	s := orWords(c.Reason, string(c.Status))
	if m := strings.TrimSpace(c.Message); m != "" {
		s += " (" + shortReason(firstLine(m)) + ")"
	}
	return s
}
