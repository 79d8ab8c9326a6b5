package rayhead

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// serveState is the simulated Serve instance. Guarded by Head.mu.
type serveState struct {
	started        bool // a config has been accepted and Serve not shut down
	proxyUp        bool
	proxyTimer     *time.Timer
	proxyGen       uint64 // bumped when Serve starts or shuts down
	apps           map[string]*serveApp
	proxyLocation  string
	httpOptions    map[string]any
	targetCapacity *float64
	// controllerLogged: the controller has written its log (it stays
	// listed after Serve shuts down, as the file stays on disk).
	controllerLogged bool
}

// serveApp is one application.
type serveApp struct {
	name        string
	routePrefix *string // nil: no HTTP ingress
	importPath  string
	config      json.RawMessage // canonical JSON of the app's config
	deployments []deploymentSpec
	status      dashboard.AppStatus
	message     string
	deployedAt  time.Time
	gen         uint64 // bumped on every change; stale timers do nothing
	timer       *time.Timer
	placed      bool // every replica has a node (capacity.go)
	// Simulated traffic (metrics.go): requests served so far, counted up
	// to trafficAt (zero while the app is not RUNNING).
	requests  float64
	trafficAt time.Time
}

type deploymentSpec struct {
	name     string
	replicas int
	// shape is one replica's ray_actor_options as written
	// (dashboard.ActorShape): Serve's implicit default of one CPU per
	// replica is not modelled, only what the config says counts.
	shape dashboard.Resources
}

// appConfig is the part of a ServeApplicationSchema the simulation reads.
type appConfig struct {
	name        string
	routePrefix *string
	importPath  string
	deployments []deploymentSpec
	canonical   json.RawMessage
}

// validationErrors collects errors the way pydantic reports them in Ray's
// 400 answers.
type validationErrors []string

func (v *validationErrors) add(loc, msg string) {
	*v = append(*v, loc+"\n  "+msg)
}

func (v validationErrors) String() string {
	noun := "errors"
	if len(v) == 1 {
		noun = "error"
	}
	return fmt.Sprintf("%d validation %s for ServeDeploySchema\n%s", len(v), noun, strings.Join(v, "\n"))
}

// parseServeConfig validates a ServeDeploySchema like Ray's pydantic model.
func parseServeConfig(body []byte) (apps []appConfig, top map[string]json.RawMessage, errs validationErrors) {
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		errs.add("__root__", "value is not a valid dict (type=type_error.dict)")
		return nil, nil, errs
	}
	rawApps, ok := top["applications"]
	if !ok || string(rawApps) == "null" {
		errs.add("applications", "field required (type=value_error.missing)")
		return nil, top, errs
	}
	var list []json.RawMessage
	if err := json.Unmarshal(rawApps, &list); err != nil {
		errs.add("applications", "value is not a valid list (type=type_error.list)")
		return nil, top, errs
	}
	for i, raw := range list {
		loc := "applications -> " + strconv.Itoa(i)
		app, ok := parseAppConfig(loc, raw, &errs)
		if ok {
			apps = append(apps, app)
		}
	}
	if len(errs) > 0 {
		return nil, top, errs
	}
	names := map[string]bool{}
	prefixes := map[string]bool{}
	for _, a := range apps {
		if names[a.name] {
			errs.add("__root__", fmt.Sprintf("Found multiple configs for application %q. (type=value_error)", a.name))
		}
		names[a.name] = true
		if a.routePrefix != nil {
			if prefixes[*a.routePrefix] {
				errs.add("__root__", fmt.Sprintf("Found duplicate applications for route prefix %q. (type=value_error)", *a.routePrefix))
			}
			prefixes[*a.routePrefix] = true
		}
	}
	return apps, top, errs
}

func parseAppConfig(loc string, raw json.RawMessage, errs *validationErrors) (appConfig, bool) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		errs.add(loc, "value is not a valid dict (type=type_error.dict)")
		return appConfig{}, false
	}
	n := len(*errs)
	a := appConfig{name: "default"}
	if v, ok := m["name"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			errs.add(loc+" -> name", "name must be a non-empty string (type=value_error)")
		}
		a.name = s
	}
	switch v := m["import_path"].(type) {
	case nil:
		errs.add(loc+" -> import_path", "field required (type=value_error.missing)")
	case string:
		if msg := checkImportPath(v); msg != "" {
			errs.add(loc+" -> import_path", msg+" (type=value_error)")
		}
		a.importPath = v
	default:
		errs.add(loc+" -> import_path", "str type expected (type=type_error.str)")
	}
	rp := "/"
	a.routePrefix = &rp
	if v, ok := m["route_prefix"]; ok {
		switch p := v.(type) {
		case nil:
			a.routePrefix = nil
		case string:
			if msg := checkRoutePrefix(p); msg != "" {
				errs.add(loc+" -> route_prefix", msg+" (type=value_error)")
			}
			a.routePrefix = &p
		default:
			errs.add(loc+" -> route_prefix", "str type expected (type=type_error.str)")
		}
	}
	if v, ok := m["deployments"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			errs.add(loc+" -> deployments", "value is not a valid list (type=type_error.list)")
		}
		for i, d := range list {
			dloc := loc + " -> deployments -> " + strconv.Itoa(i)
			dm, isMap := d.(map[string]any)
			if !isMap {
				errs.add(dloc, "value is not a valid dict (type=type_error.dict)")
				continue
			}
			name, _ := dm["name"].(string)
			if name == "" {
				errs.add(dloc+" -> name", "field required (type=value_error.missing)")
				continue
			}
			replicas := 1
			switch r := dm["num_replicas"].(type) {
			case float64:
				if r < 0 || r != float64(int(r)) {
					errs.add(dloc+" -> num_replicas", "value must be a non-negative integer or \"auto\" (type=value_error)")
				}
				replicas = int(r)
			case string:
				if r != "auto" {
					errs.add(dloc+" -> num_replicas", "value must be a non-negative integer or \"auto\" (type=value_error)")
				}
			case nil:
			default:
				errs.add(dloc+" -> num_replicas", "value must be a non-negative integer or \"auto\" (type=value_error)")
			}
			opts, _ := dm["ray_actor_options"].(map[string]any)
			a.deployments = append(a.deployments, deploymentSpec{name: name, replicas: replicas, shape: dashboard.ActorShape(opts)})
		}
	}
	if len(*errs) > n {
		return appConfig{}, false
	}
	if len(a.deployments) == 0 {
		// Ray learns the deployments by importing the code; name the one
		// this simulation assumes after the import path's attribute.
		a.deployments = []deploymentSpec{{name: ingressName(a.importPath), replicas: 1}}
	}
	a.canonical, _ = json.Marshal(m) // sorted keys: equal configs compare equal
	return a, true
}

// checkImportPath applies Ray's import_path format rule: "module:attr" or
// "module.attr".
func checkImportPath(p string) string {
	if strings.Contains(p, ":") {
		if strings.Count(p, ":") > 1 {
			return fmt.Sprintf("Got invalid import path %q. An import path may have at most one colon.", p)
		}
		if strings.HasPrefix(p, ":") || strings.HasSuffix(p, ":") {
			return fmt.Sprintf("Got invalid import path %q. An import path may not start or end with a colon.", p)
		}
		return ""
	}
	if !strings.Contains(p, ".") {
		return fmt.Sprintf("Got invalid import path %q. An import path must contain at least one dot or colon "+
			"separating the module (and potentially submodules) from the deployment graph. E.g.: \"module.deployment_graph\".", p)
	}
	if strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") {
		return fmt.Sprintf("Got invalid import path %q. An import path may not start or end with a dot.", p)
	}
	return ""
}

func checkRoutePrefix(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Sprintf("Got %q for route_prefix. Route prefix must start with \"/\".", p)
	case len(p) > 1 && strings.HasSuffix(p, "/"):
		return fmt.Sprintf("Got %q for route_prefix. Route prefix cannot end with \"/\" unless it's the root.", p)
	case strings.ContainsAny(p, "{}"):
		return fmt.Sprintf("Got %q for route_prefix. Route prefix cannot contain wildcards.", p)
	}
	return ""
}

// ingressName is the attribute part of an import path.
func ingressName(importPath string) string {
	if i := strings.LastIndexAny(importPath, ":."); i >= 0 && i < len(importPath)-1 {
		return importPath[i+1:]
	}
	return "ingress"
}

// importModule is the module part of an import path.
func importModule(importPath string) string {
	if i := strings.Index(importPath, ":"); i >= 0 {
		return importPath[:i]
	}
	if i := strings.LastIndex(importPath, "."); i >= 0 {
		return importPath[:i]
	}
	return importPath
}

// after runs f after d, counted in h.timerWG so Close can wait for it.
// h.mu must be held (and the Head open).
func (h *Head) after(d time.Duration, f func()) *time.Timer {
	h.timerWG.Add(1)
	return time.AfterFunc(d, func() {
		defer h.timerWG.Done()
		h.mu.Lock()
		defer h.mu.Unlock()
		if !h.closed {
			f()
		}
	})
}

// cancelTimer stops a timer made by after. h.mu must be held.
func (h *Head) cancelTimer(t **time.Timer) {
	if *t != nil && (*t).Stop() {
		h.timerWG.Done()
	}
	*t = nil
}

func (h *Head) handleServePut(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return
	}
	apps, top, errs := parseServeConfig(body)
	if len(errs) > 0 {
		http.Error(w, errs.String(), http.StatusBadRequest)
		return
	}
	var targetCapacity *float64
	if raw, ok := top["target_capacity"]; ok && string(raw) != "null" {
		var tc float64
		if err := json.Unmarshal(raw, &tc); err != nil || tc < 0 || tc > 100 {
			http.Error(w, "1 validation error for ServeDeploySchema\ntarget_capacity\n  must be a number between 0 and 100 (type=value_error)", http.StatusBadRequest)
			return
		}
		targetCapacity = &tc
	}
	proxyLocation := "EveryNode"
	if raw, ok := top["proxy_location"]; ok {
		_ = json.Unmarshal(raw, &proxyLocation)
	}
	httpOptions := map[string]any{"host": "0.0.0.0", "port": 8000}
	if raw, ok := top["http_options"]; ok {
		_ = json.Unmarshal(raw, &httpOptions)
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		http.Error(w, "head is shutting down", http.StatusServiceUnavailable)
		return
	}
	s := &h.serve
	s.proxyLocation, s.httpOptions, s.targetCapacity = proxyLocation, httpOptions, targetCapacity
	if !s.started {
		s.started = true
		s.proxyGen++
		gen := s.proxyGen
		s.proxyTimer = h.after(h.opts.ServeDeployDelay, func() {
			if s.proxyGen == gen {
				s.proxyTimer = nil
				s.proxyUp = true
			}
		})
	}
	now := time.Now()
	keep := map[string]bool{}
	for _, cfg := range apps {
		keep[cfg.name] = true
		a := s.apps[cfg.name]
		if a != nil && a.status != dashboard.AppDeleting && bytes.Equal(a.config, cfg.canonical) {
			continue // unchanged: Ray does not redeploy it
		}
		if a == nil {
			a = &serveApp{name: cfg.name}
			s.apps[cfg.name] = a
		}
		h.cancelTimer(&a.timer)
		a.gen++
		a.routePrefix, a.importPath, a.config, a.deployments = cfg.routePrefix, cfg.importPath, cfg.canonical, cfg.deployments
		a.status, a.message, a.deployedAt = dashboard.AppDeploying, "", now
		s.controllerLogged = true
		logLine(h.controller, "INFO", "ServeController", "application_state.py:1 -- Deploying application '%s' (import_path %s).", cfg.name, cfg.importPath)
		gen, app := a.gen, a
		a.timer = h.after(h.opts.ServeDeployDelay, func() { h.finishDeploy(app, gen) })
	}
	for name, a := range s.apps {
		if keep[name] || a.status == dashboard.AppDeleting {
			continue
		}
		h.cancelTimer(&a.timer)
		a.gen++
		a.status, a.message = dashboard.AppDeleting, "Deleting application."
		logLine(h.controller, "INFO", "ServeController", "application_state.py:1 -- Deleting application '%s'.", name)
		gen, app := a.gen, a
		a.timer = h.after(h.opts.ServeDeployDelay, func() {
			if app.gen == gen && s.apps[app.name] == app {
				delete(s.apps, app.name)
			}
		})
	}
	h.placeLocked()
	w.WriteHeader(http.StatusOK)
}

// finishDeploy ends a deployment started at generation gen. h.mu is held.
func (h *Head) finishDeploy(a *serveApp, gen uint64) {
	if a.gen != gen {
		return
	}
	a.timer = nil
	if h.opts.ImportFails(a.importPath) {
		a.status = dashboard.AppDeployFailed
		a.message = fmt.Sprintf("Deploying app '%s' failed with exception:\nTraceback (most recent call last):\n"+
			"  File \"ray/serve/_private/application_state.py\", in build_serve_application\n"+
			"ModuleNotFoundError: No module named '%s'\n", a.name, importModule(a.importPath))
		a.deployments = nil
		logLine(h.controller, "ERROR", "ServeController", "application_state.py:1 -- Failed to deploy application '%s': %s", a.name, strings.TrimSpace(a.message))
		return
	}
	// RUNNING once every replica is placed: now, or when nodes offering the
	// resources appear (placeLocked).
	a.status, a.message = dashboard.AppDeploying, ""
	h.placeLocked()
}

// shutdownServeLocked removes every application and stops the proxy.
// h.mu must be held.
func (h *Head) shutdownServeLocked() {
	s := &h.serve
	for _, a := range s.apps {
		h.cancelTimer(&a.timer)
	}
	h.cancelTimer(&s.proxyTimer)
	s.proxyGen++
	s.apps = map[string]*serveApp{}
	s.started, s.proxyUp = false, false
	s.targetCapacity = nil
	h.placeLocked()
}

func (h *Head) handleServeDelete(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.shutdownServeLocked()
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (h *Head) handleServeGet(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	d := h.serveDetailsLocked()
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, d)
}

// serveDetailsLocked renders the Serve status. h.mu must be held.
func (h *Head) serveDetailsLocked() dashboard.ServeDetails {
	s := &h.serve
	d := dashboard.ServeDetails{
		Proxies:      map[string]dashboard.ServeProxy{},
		DeployMode:   dashboard.DeployModeUnset,
		Applications: map[string]dashboard.ServeApplication{},
	}
	if !s.started {
		return d
	}
	d.ControllerInfo = dashboard.ServeActorDetails{NodeID: h.node, NodeIP: h.opts.NodeIP, ActorName: "SERVE_CONTROLLER_ACTOR"}
	d.ProxyLocation = s.proxyLocation
	d.HTTPOptions = s.httpOptions
	d.DeployMode = dashboard.DeployModeMultiApp
	d.TargetCapacity = s.targetCapacity
	proxyStatus := "STARTING"
	if s.proxyUp {
		proxyStatus = "HEALTHY"
	}
	d.Proxies[h.node] = dashboard.ServeProxy{
		ServeActorDetails: dashboard.ServeActorDetails{NodeID: h.node, NodeIP: h.opts.NodeIP, ActorName: "SERVE_PROXY_ACTOR-" + h.node},
		Status:            proxyStatus,
	}
	for name, a := range s.apps {
		app := dashboard.ServeApplication{
			Name:              name,
			Status:            a.status,
			Message:           a.message,
			LastDeployedTimeS: float64(a.deployedAt.UnixMilli()) / 1000,
			DeployedAppConfig: a.config,
			Source:            "declarative",
			Deployments:       map[string]dashboard.ServeDeployment{},
		}
		if a.routePrefix != nil {
			app.RoutePrefix = *a.routePrefix
		}
		for _, spec := range a.deployments {
			dep := dashboard.ServeDeployment{Name: spec.name, TargetNumReplicas: spec.replicas}
			state := "RUNNING"
			switch a.status {
			case dashboard.AppDeploying:
				dep.Status, dep.StatusTrigger, state = dashboard.DeploymentUpdating, "CONFIG_UPDATE_STARTED", "STARTING"
			case dashboard.AppDeleting:
				dep.Status, dep.StatusTrigger, state = dashboard.DeploymentHealthy, "CONFIG_UPDATE_COMPLETED", "STOPPING"
			default:
				dep.Status, dep.StatusTrigger = dashboard.DeploymentHealthy, "CONFIG_UPDATE_COMPLETED"
			}
			for i := 0; i < spec.replicas; i++ {
				id := fmt.Sprintf("%s-%d-%d", spec.name, a.gen, i)
				dep.Replicas = append(dep.Replicas, dashboard.ServeReplica{
					ReplicaID: id, State: state, NodeIP: h.opts.NodeIP,
					ActorName: "SERVE_REPLICA::" + name + "#" + spec.name + "#" + id,
				})
			}
			app.Deployments[spec.name] = dep
		}
		d.Applications[name] = app
	}
	return d
}

// proxyMux is the Serve proxy: /-/healthz, /-/routes and the applications'
// routes.
func (h *Head) proxyMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+dashboard.ProxyHealthPath, func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		up := h.serve.proxyUp
		h.mu.Unlock()
		if !up {
			http.Error(w, "Serve proxy is not running.", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, dashboard.HealthyBody)
	})
	mux.HandleFunc("GET "+dashboard.ProxyRoutesPath, func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		up := h.serve.proxyUp
		routes := dashboard.ServeRoutes{}
		for name, a := range h.serve.apps {
			if a.status == dashboard.AppRunning && a.routePrefix != nil {
				routes[*a.routePrefix] = name
			}
		}
		h.mu.Unlock()
		if !up {
			http.Error(w, "Serve proxy is not running.", http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, http.StatusOK, routes)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		up := h.serve.proxyUp
		var prefixes []string
		byPrefix := map[string]string{}
		for name, a := range h.serve.apps {
			if a.status == dashboard.AppRunning && a.routePrefix != nil {
				prefixes = append(prefixes, *a.routePrefix)
				byPrefix[*a.routePrefix] = name
			}
		}
		h.mu.Unlock()
		if !up {
			http.Error(w, "Serve proxy is not running.", http.StatusServiceUnavailable)
			return
		}
		sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
		for _, p := range prefixes {
			if p == "/" || r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
				w.Header().Set("Content-Type", "text/plain")
				fmt.Fprintf(w, "Hello from Serve application %q (route prefix %s)\n", byPrefix[p], p)
				return
			}
		}
		http.Error(w, fmt.Sprintf("Path '%s' not found. Ping http://.../-/routes for available routes.", r.URL.Path), http.StatusNotFound)
	})
	return mux
}
