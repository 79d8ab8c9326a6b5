// Package format is the TUI's words: the status words, counts and ages of
// rayapi/status under short names, the RayCronJob's schedule in words,
// the describer that lays out a describe page's fields, and a row's
// table.Meta (ObjMeta) and the AGE column. Every room above reads it; it
// reads none of them.
package format
