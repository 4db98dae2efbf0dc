// Loaded with --require into every node test process (the harness user):
// the trusted side of the node boundary. Only the checks' compiled code (the
// build directory's checks/), the image's own modules (/opt/evalctl, /usr)
// and node's builtins load here; a require of anything else (the answer's
// compiled modules, or a module an answer planted where node looks, such as
// /tmp/node_modules) returns a remote handle to that module loaded in the
// answer's host (answerd.js, the command user), and every use of it is
// forwarded (boundary.js). The answer's code never runs here, so there is
// nothing in this process for it to patch, wrap, register into or exit from.
"use strict";
const Module = require("module");
const sock = process.env.EVALCTL_ANSWER_SOCKET;
const build = process.env.EVALCTL_BUILD_DIR;
// The grader's nonce (EVALCTL_NONCE): given to the test processes alone,
// never to the answer's host or programs, and taken out of a test file's
// environment before its tests load. Only this process can write a mark
// carrying it.
const nonce = process.env.EVALCTL_NONCE || "";
if (process.env.NODE_TEST_CONTEXT) delete process.env.EVALCTL_NONCE;
if (sock && build) {
  const { Peer, unrepresentable } = require("/opt/evalctl/boundary.js");
  // A test during which the boundary met a construct of the tests' it
  // cannot carry (boundary.js's unrepresentable) gets a mark on its own
  // line of the report, "evalctl_unrepresentable NONCE {test, construct}";
  // the grader counts it only with its nonce and only on a failed test.
  // Only in a test file's process (node --test runs one per file), where
  // the root's hooks run around every test, nested ones included.
  if (nonce && process.env.NODE_TEST_CONTEXT) {
    const nt = require("node:test");
    nt.beforeEach(() => {
      unrepresentable.length = 0;
    });
    nt.afterEach((t) => {
      if (unrepresentable.length === 0) return;
      const what = Array.from(new Set(unrepresentable)).sort().join("; ");
      unrepresentable.length = 0;
      process.stdout.write("\nevalctl_unrepresentable " + nonce + " " + JSON.stringify({ test: String(t.name), construct: what }) + "\n");
    });
  }
  let peer;
  const modules = new Map();
  const trusted = [build + "/checks/", "/opt/evalctl/", "/usr/"];
  const isAnswer = (file) => !trusted.some((d) => file.startsWith(d));
  // A module's exported functions are looked up once (a test calls
  // mod.fn() many times; each lookup would be a round trip); setting or
  // deleting an export forgets it.
  const cached = (peer, remote) => {
    const fns = new Map();
    const m = new Proxy(remote, {
      get(t, k) {
        if (fns.has(k)) return fns.get(k);
        const v = Reflect.get(t, k);
        if (typeof v === "function") fns.set(k, v);
        return v;
      },
      set(t, k, v) {
        fns.delete(k);
        return Reflect.set(t, k, v);
      },
      deleteProperty(t, k) {
        fns.delete(k);
        return Reflect.deleteProperty(t, k);
      },
    });
    peer.theirIds.set(m, peer.theirIds.get(remote));
    return m;
  };
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    if (!isMain && parent && typeof request === "string" && !Module.isBuiltin(request)) {
      let file;
      try {
        file = Module._resolveFilename(request, parent, isMain);
      } catch (e) {
        file = undefined;
      }
      if (file !== undefined && isAnswer(file)) {
        if (modules.has(file)) return modules.get(file);
        if (!peer) peer = new Peer({ trusted: true, path: sock });
        const remote = peer.call("import", [file]);
        const m = typeof remote === "object" || typeof remote === "function" ? cached(peer, remote) : remote;
        modules.set(file, m);
        return m;
      }
    }
    return load.apply(this, arguments);
  };
}
