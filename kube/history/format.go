package history

import (
	"fmt"
	"strings"
)

// Change is what an entry says happened, in words, without its time or
// author: "worker group small: replicas 1 → 3", "pod x-worker-abc OOM-killed (exit 137)".
func (e *Entry) Change() string {
	var b strings.Builder
	switch e.What {
	case WhatCreated:
		b.WriteString("created")
		if e.To != "" {
			fmt.Fprintf(&b, " (%s)", e.To)
		}
	case WhatDeleted:
		b.WriteString("deleted")
	case WhatReplicas:
		fmt.Fprintf(&b, "worker group %s: replicas %s → %s", e.Subject, e.From, e.To)
	case WhatWorkersToDelete:
		fmt.Fprintf(&b, "worker group %s: workers to delete %s", e.Subject, e.To)
	case WhatGroupAdded:
		fmt.Fprintf(&b, "worker group %s added (replicas %s)", e.Subject, e.To)
	case WhatGroupRemoved:
		fmt.Fprintf(&b, "worker group %s removed (had replicas %s)", e.Subject, e.From)
	case WhatSuspend:
		what := "suspend"
		if e.Subject != "" {
			what = "worker group " + e.Subject + ": suspend"
		}
		fmt.Fprintf(&b, "%s %s → %s", what, e.From, e.To)
	case WhatState:
		fmt.Fprintf(&b, "status %s → %s", e.From, e.To)
	case WhatCondition:
		if e.From == "" {
			fmt.Fprintf(&b, "condition %s %s", e.Subject, e.To)
		} else {
			fmt.Fprintf(&b, "condition %s %s → %s", e.Subject, e.From, e.To)
		}
	case WhatJobStatus:
		fmt.Fprintf(&b, "job status %s → %s", e.From, e.To)
	case WhatDeploymentStatus:
		fmt.Fprintf(&b, "deployment status %s → %s", e.From, e.To)
	case WhatPodCreated:
		fmt.Fprintf(&b, "pod %s created", e.Subject)
		if e.Reason != "" {
			fmt.Fprintf(&b, " (group %s)", e.Reason)
		}
	case WhatPodDeleted:
		fmt.Fprintf(&b, "pod %s deleted (was %s)", e.Subject, e.From)
	case WhatPodEvicted:
		fmt.Fprintf(&b, "pod %s evicted", e.Subject)
	case WhatPodFailed:
		fmt.Fprintf(&b, "pod %s failed", e.Subject)
		if e.Reason != "" {
			fmt.Fprintf(&b, ": %s", e.Reason)
		}
	case WhatPodOOMKilled:
		fmt.Fprintf(&b, "container %s OOM-killed (%s)", e.Subject, e.To)
	case WhatPodRestarted:
		fmt.Fprintf(&b, "container %s restarted (%s → %s)", e.Subject, e.From, e.To)
		if e.Reason != "" {
			fmt.Fprintf(&b, ": %s", e.Reason)
		}
	default:
		fmt.Fprintf(&b, "%s %s %s → %s", e.What, e.Subject, e.From, e.To)
	}
	return b.String()
}

// Detail is the entry's message, or its reason when the change does not
// already say it ("" when neither).
func (e *Entry) Detail() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.What == WhatState && e.Reason != "":
		return e.Reason
	}
	return ""
}

// By is the author in words, "" when not known.
func (e *Entry) By() string { return e.Author.String() }
