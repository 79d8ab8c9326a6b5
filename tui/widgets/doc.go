// Package widgets holds the components the TUI's pages are built from,
// each a model with its keys (HandleKey, ViewKeys) and a size: TextView
// and ScrollKey (scrolling text), LogView (a followed log: its bounded
// stream, batches, search, and its begin/start/close/receive written once
// for the pod and Ray log pages), the confirmation, scale and port-forward
// dialogs (host.Dialog, their keys the KeyMap's Dialog bindings), and the Why and Ray capacity blocks of the detail
// pages. Widgets import tui/host, never a page.
package widgets
