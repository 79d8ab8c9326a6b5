package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RayCronJobSpec is the desired state of a RayCronJob: a schedule and the
// RayJob each tick creates. Wire-compatible with KubeRay v1.7.0's.
type RayCronJobSpec struct {
	// JobTemplate is the spec of the RayJob created on each tick.
	JobTemplate RayJobSpec `json:"jobTemplate"`
	// Schedule is a standard five-field cron expression (minute hour
	// day-of-month month day-of-week) or a descriptor (@hourly, @daily,
	// @every 5m, ...). The time zone goes in timeZone, never in the schedule.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ')",message="must not contain TZ= or CRON_TZ=; set spec.timeZone instead"
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') || self.matches(r'^\\s*\\S+(\\s+\\S+){4}\\s*$')",message="must be five fields (minute hour day-of-month month day-of-week) or a descriptor such as @hourly"
	Schedule string `json:"schedule"`
	// TimeZone is the IANA name of the schedule's time zone (for example
	// Europe/Berlin). Unset, the schedule runs in the operator's local time
	// zone; the empty string is refused.
	// +kubebuilder:validation:MinLength=1
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`
	// Suspend stops new ticks; RayJobs already created are not affected.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
}

// IsSuspended reports whether spec.suspend is true.
func (s *RayCronJobSpec) IsSuspended() bool { return s.Suspend != nil && *s.Suspend }

// RayCronJobStatus is the observed state of a RayCronJob.
type RayCronJobStatus struct {
	// LastScheduleTime is the scheduled time of the latest tick that has a
	// RayJob (the tick's time, not the moment it was created).
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// Conditions are written by raydar's reconciler (KubeRay has none): the
	// ScheduleValid condition is False, naming the field, while the schedule,
	// time zone or job template is invalid.
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// RayCronJob creates a RayJob from its jobTemplate on every tick of its
// schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=all
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="schedule",type=string,JSONPath=".spec.schedule",priority=0
// +kubebuilder:printcolumn:name="timezone",type=string,JSONPath=".spec.timeZone",priority=0
// +kubebuilder:printcolumn:name="last schedule",type=date,JSONPath=".status.lastScheduleTime",priority=0
// +kubebuilder:printcolumn:name="age",type=date,JSONPath=".metadata.creationTimestamp",priority=0
// +kubebuilder:printcolumn:name="suspend",type=boolean,JSONPath=".spec.suspend",priority=0
type RayCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RayCronJobSpec `json:"spec,omitempty"`
	// +optional
	Status RayCronJobStatus `json:"status,omitempty"`
}

// RayCronJobList is a list of RayCronJobs.
//
// +kubebuilder:object:root=true
type RayCronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RayCronJob `json:"items"`
}
