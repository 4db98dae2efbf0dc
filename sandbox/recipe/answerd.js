// The answer's host for node tests, run as the command user:
// `node /opt/evalctl/answerd.js --serve`, started by nodegate.py (which
// accepts only the harness user's connections, by peer credentials) for
// each test process that connects (node --test runs one per test file),
// with the connection as fd 3. It loads the answer's modules on request
// and serves the tests' calls into them (boundary.js), so test files
// share answer module state no more than they would without the
// boundary. Nothing here is trusted: the answer's code runs in these
// processes and may change anything in them; the test process only ever
// sees plain values, its own errors and handles from here.
"use strict";

if (process.argv[2] === "--serve") {
  const { Peer } = require("/opt/evalctl/boundary.js");
  const peer = new Peer({ trusted: false, fd: 3, keep: true });
  peer.onClose = () => process.exit(0);
  peer.handlers = {
    import(file) {
      const exp = require(String(file));
      if ((typeof exp === "object" && exp !== null) || typeof exp === "function") peer.asHandle.add(exp);
      return exp;
    },
  };
  // What the answer leaves unhandled is reported in the test process, as
  // it would be were the answer loaded there.
  const report = (kind) => (err) => {
    try {
      peer.call("uncaught", [kind, peer.enc(err)]);
    } catch (e) {
      process.exit(1);
    }
  };
  process.on("uncaughtException", report("exception"));
  process.on("unhandledRejection", report("rejection"));
} else {
  process.stderr.write("usage: node answerd.js --serve (started by nodegate.py)\n");
  process.exit(2);
}
