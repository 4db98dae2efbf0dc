package sandbox

import (
	"fmt"
	"net/http"

	"github.com/docker/cli/cli/connhelper"
	"github.com/docker/docker/client"
)

// sshHelper reaches an ssh:// engine the way the docker CLI does: through
// `ssh host docker system dial-stdio` (the remote needs the docker CLI and
// the local user a key the remote accepts). A path in the address names
// the remote engine's socket; config, when given, is the ssh_config file
// ssh reads instead of the user's (ssh -F: key, known hosts, port).
func sshHelper(host, config string) ([]client.Opt, error) {
	var flags []string
	if config != "" {
		flags = []string{"-F", config}
	}
	helper, err := connhelper.GetConnectionHelperWithSSHOpts(host, flags)
	if err != nil {
		return nil, fmt.Errorf("ssh host %q: %w", host, err)
	}
	return []client.Opt{
		client.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: helper.Dialer}}),
		client.WithHost(helper.Host),
		client.WithDialContext(helper.Dialer),
	}, nil
}
