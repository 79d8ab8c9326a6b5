// Package schedule owns what a RayCronJob's schedule means to people and to
// the reconciler alike: its words (Describe: "every day at 02:00
// Europe/Berlin"), when its next RayJob is due (NextRun) and the time after
// which the next tick counts (Earliest). The TUI, raydar get and the
// RayCronJob reconciler (controller/raycronjob) all read it, so none of the
// first two imports the controller. The schedule is parsed by rayapi/v1's
// ParseCronSchedule, the one parser. Every function is pure.
package schedule
