package sandbox

import (
	"fmt"
	"net/http"

	"github.com/docker/cli/cli/connhelper"
	"github.com/docker/docker/client"
)

// sshHelper reaches an ssh:// engine the way the docker CLI does: through
// `ssh host docker system dial-stdio` (the remote needs the docker CLI and
// the local user a key the remote accepts).
func sshHelper(host string) ([]client.Opt, error) {
	helper, err := connhelper.GetConnectionHelper(host)
	if err != nil {
		return nil, fmt.Errorf("ssh host %q: %w", host, err)
	}
	return []client.Opt{
		client.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: helper.Dialer}}),
		client.WithHost(helper.Host),
		client.WithDialContext(helper.Dialer),
	}, nil
}
