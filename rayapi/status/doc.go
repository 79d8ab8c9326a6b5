// Package status owns the words, ready counts and ages raydar shows for every
// kind: raydar get and the TUI both use it, so one object reads the same in
// both.
//
// Each kind has one function that gives its STATUS word (Cluster, Job,
// Service, CronJob, Pod); each kind's descriptor (rayapi/kinds) names its
// function, and kinds.StatusOf picks the one for an object. A new kind adds
// its function here and names it in its descriptor. The other functions are the shared columns:
// ready counts ("2/3": Workers, PodReady, Apps), ages (Age, Since), a job's
// run time (JobDuration), a conditions summary (Conditions) and a
// RayService's incremental upgrade: its traffic split, target capacities
// and next step (IncrementalUpgrade, Traffic; incremental.go), and a
// RayJob whose status contradicts itself (JobContradiction, kuberay#2314;
// contradiction.go): the lists show its word marked (JobWord) and
// rayapi/why states it as a cause. Every
// function is pure: it reads the object and the clock it is given.
package status
