// Package registry is the TUI's registry of kinds (k9s' registrar) as a
// mechanism: the Entry a kind's page package fills in (its views, `:`
// aliases and help line, store kind, lifecycle, the actions each view
// offers) with its typed Def (list columns with their cells, drill-down,
// describe fields, counted children, row keys), the shared columns (NAME,
// NAMESPACE, AGE, WHY), the generic list page every kind's list is
// (ListPage, over tui/table), the child index that keeps a list's count
// columns up to date from store changes (a RayCronJob's RayJobs), and
// Kinds, the lookups over the entries that the App and, through
// host.Kinds, the pages and actions ask.
//
// The entries themselves live beside their pages (tui/pages/cluster, job,
// service, cronjob, pod: each one's Entry); the App (tui) only lists them.
// registry imports no page, widget or action: it sits below the pages,
// above host.
package registry
