package portforward

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Ray's well-known ports on a head pod.
const (
	DashboardPort = 8265
	ServePort     = 8000
	ClientPort    = 10001
)

// Port is one forwarded port: Local on this machine, Remote on the pod.
// Local 0 picks a free port when listening.
type Port struct {
	Local, Remote int
	// Name is "dashboard", "serve", "client" or "" for a custom port.
	Name string
}

// String is "local:remote", after the port's name when it has one.
func (p Port) String() string {
	if p.Name != "" {
		return fmt.Sprintf("%s %d:%d", p.Name, p.Local, p.Remote)
	}
	return fmt.Sprintf("%d:%d", p.Local, p.Remote)
}

// Presets, same local and remote port.
var (
	Dashboard = Port{Local: DashboardPort, Remote: DashboardPort, Name: "dashboard"}
	Serve     = Port{Local: ServePort, Remote: ServePort, Name: "serve"}
	Client    = Port{Local: ClientPort, Remote: ClientPort, Name: "client"}
)

// ParsePort reads "LOCAL:REMOTE", "PORT" (the same on both sides) or
// ":REMOTE" (a free local port).
func ParsePort(s string) (Port, error) {
	s = strings.TrimSpace(s)
	local, remote, found := strings.Cut(s, ":")
	if !found {
		remote = local
	}
	r, err := portNumber(remote, false)
	if err != nil {
		return Port{}, fmt.Errorf("port %q: remote %w", s, err)
	}
	l := 0
	if local != "" {
		if l, err = portNumber(local, true); err != nil {
			return Port{}, fmt.Errorf("port %q: local %w", s, err)
		}
	}
	p := Port{Local: l, Remote: r}
	for _, pre := range []Port{Dashboard, Serve, Client} {
		if pre.Remote == r {
			p.Name = pre.Name
		}
	}
	return p, nil
}

func portNumber(s string, zeroOK bool) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !zeroOK) {
		return 0, fmt.Errorf("port must be a number from 1 to 65535")
	}
	return n, nil
}

// CheckPorts refuses an empty list and two ports with the same local port
// (other than 0).
func CheckPorts(ports []Port) error {
	if len(ports) == 0 {
		return fmt.Errorf("no port to forward (say --dashboard, --serve, --client or --port LOCAL:REMOTE)")
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p.Local != 0 && seen[p.Local] {
			return fmt.Errorf("local port %d asked for twice", p.Local)
		}
		seen[p.Local] = true
	}
	return nil
}

// CheckAddress says why address cannot be a forward's local address, as
// the TUI's dialog asks for it: an IP address of this machine's (127.0.0.1:
// this machine only; 0.0.0.0 or ::: every interface) or localhost. It
// parses only: whether the address is this machine's is known when
// listening.
func CheckAddress(address string) error {
	switch {
	case address == "":
		return fmt.Errorf("no local address (127.0.0.1 for this machine only, 0.0.0.0 for every interface)")
	case address == "localhost":
		return nil
	}
	ip := net.ParseIP(address)
	if ip == nil {
		return fmt.Errorf("local address %q is not an IP address (127.0.0.1 for this machine only, 0.0.0.0 for every interface)", address)
	}
	if ip.IsMulticast() {
		return fmt.Errorf("local address %s is a multicast address: a forward cannot listen on it", address)
	}
	return nil
}

func joinHostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
