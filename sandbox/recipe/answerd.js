// The answer's host for node tests, run as the command user:
// `node /opt/evalctl/answerd.js SOCKET`. Each test process that connects
// (node --test runs one per test file) gets a fresh node process of its own
// (`answerd.js --serve`, the connection as fd 3) that loads the answer's
// modules on request and serves the tests' calls into them (boundary.js),
// so test files share answer module state no more than they would without
// the boundary. Nothing here is trusted: the answer's code runs in these
// processes and may change anything in them; the test process only ever
// sees plain values, its own errors and handles from here.
"use strict";
const net = require("net");
const fs = require("fs");
const { spawn } = require("child_process");

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
  const sock = process.argv[2];
  process.chdir("/workspace");
  try {
    fs.unlinkSync(sock);
  } catch (e) {
    /* not there */
  }
  const srv = net.createServer({ pauseOnConnect: true }, (conn) => {
    const child = spawn(process.execPath, [__filename, "--serve"], { stdio: ["ignore", "inherit", "inherit", conn], cwd: "/workspace" });
    child.on("error", () => conn.destroy());
    child.on("spawn", () => conn.destroy());
  });
  srv.listen(sock + ".new", () => {
    fs.chmodSync(sock + ".new", 0o777);
    fs.renameSync(sock + ".new", sock);
  });
}
