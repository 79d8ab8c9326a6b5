package portforward

import (
	"fmt"
	"net"
	"os"
	osuser "os/user"
	"strings"
)

// SSHLine is the command to run on a laptop to reach the forwards of a
// raydar running on a bastion: `ssh -L 8265:127.0.0.1:8265 user@host`, one
// -L per port, the same port number on the laptop as on the bastion.
//
// Assumptions, said where it is shown: user and host are how the laptop
// reaches this machine ($USER and the hostname, which a jump host or an
// ~/.ssh/config alias may change); a forward listening on every address
// (0.0.0.0, ::) is reached at 127.0.0.1 on the bastion, one on a specific
// address at that address.
func SSHLine(address string, ports []Port, user, host string) string {
	target := address
	switch address {
	case "", "0.0.0.0", "::", "localhost":
		target = "127.0.0.1"
	}
	if ip := net.ParseIP(target); ip != nil && ip.To4() == nil {
		target = "[" + target + "]"
	}
	var b strings.Builder
	b.WriteString("ssh")
	for _, p := range ports {
		fmt.Fprintf(&b, " -L %d:%s:%d", p.Local, target, p.Local)
	}
	dest := host
	if dest == "" {
		dest = "BASTION"
	}
	if user != "" {
		dest = user + "@" + dest
	}
	b.WriteString(" " + dest)
	return b.String()
}

// Here is who and where this raydar runs, for the ssh line: $USER (or
// $LOGNAME, or the account of this process's uid when neither is set, as
// in a root shell without a login) and the hostname; either may be "".
func Here() (user, host string) {
	user = os.Getenv("USER")
	if user == "" {
		user = os.Getenv("LOGNAME")
	}
	if user == "" {
		if u, err := osuser.Current(); err == nil {
			user = u.Username
		}
	}
	host, _ = os.Hostname()
	return user, host
}

// Where names this machine as the ssh line reaches it: user@host, or host
// alone when the user is not known.
func Where(user, host string) string {
	if user == "" {
		return host
	}
	return user + "@" + host
}
