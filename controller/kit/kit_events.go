package kit

import "strings"

// event is a Kubernetes Event to emit on the RayCluster.
type Event struct {
	Type    string // corev1.EventTypeNormal or Warning
	Reason  string
	Action  string
	Message string
}

func joinPhrases(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
