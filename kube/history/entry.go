package history

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// What an entry records.
const (
	WhatCreated          = "created"
	WhatDeleted          = "deleted"
	WhatReplicas         = "replicas"          // Subject: the worker group
	WhatWorkersToDelete  = "workers-to-delete" // Subject: the worker group; To: the pods named
	WhatGroupAdded       = "group-added"
	WhatGroupRemoved     = "group-removed"
	WhatSuspend          = "suspend"
	WhatState            = "state"     // the STATUS word of rayapi/status
	WhatCondition        = "condition" // Subject: the condition type; From/To: status (reason)
	WhatJobStatus        = "job-status"
	WhatDeploymentStatus = "deployment-status"
	WhatPodCreated       = "pod-created" // Subject: the pod
	WhatPodDeleted       = "pod-deleted"
	WhatPodEvicted       = "pod-evicted"
	WhatPodOOMKilled     = "pod-oomkilled"
	WhatPodRestarted     = "pod-restarted"
	WhatPodFailed        = "pod-failed"
)

// Ref names the object an entry is filed under.
type Ref struct {
	// Server is the URL of the API server whose object it is (a kubeconfig
	// cluster's server): one machine's record holds every cluster raydar
	// watched from it, and a default/x of one is not the default/x of
	// another. Entries written before it was recorded (2026-12-05) have
	// none and are not shown under any server.
	Server    string    `json:"server,omitempty"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid,omitempty"`
}

// key is the store's key of the object's timeline (UID left out: a
// cluster deleted and created again under its name keeps one timeline,
// whose entries carry each UID).
func (r Ref) key() string {
	k := r.Kind + "/" + r.Namespace + "/" + r.Name
	if r.Server != "" {
		k = r.Server + " " + k
	}
	return k
}

// Entry is one line of an object's timeline.
type Entry struct {
	Time time.Time `json:"time"`
	Ref
	What string `json:"what"`
	// Subject is the part of the object (worker group, pod, condition type).
	Subject string `json:"subject,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	// Author is who wrote the change, for changes of the spec; nil when
	// not known (status changes are the reconciler's).
	Author *Author `json:"author,omitempty"`
	// Reason and Message explain the change (a condition's, a pod's), the
	// message truncated to MaxMessage.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// MaxMessage bounds an entry's message (bytes, cut at a rune).
const MaxMessage = 240

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !runeStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
