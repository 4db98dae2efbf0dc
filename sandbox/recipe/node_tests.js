// Loaded with --require into every node test process (the harness user):
// the trusted side of the node boundary. A test file's require of a module
// the tests were not compiled from (anything in the build directory outside
// the checks, that is the answer's compiled code) returns a remote handle to
// that module loaded in the answer's host (answerd.js, the command user);
// every use of it is forwarded (boundary.js). The answer's code never runs
// here, so there is nothing in this process for it to patch, wrap, register
// into or exit from.
"use strict";
const Module = require("module");
const sock = process.env.EVALCTL_ANSWER_SOCKET;
const build = process.env.EVALCTL_BUILD_DIR;
if (sock && build) {
  const { Peer } = require("/opt/evalctl/boundary.js");
  let peer;
  const modules = new Map();
  const isAnswer = (file) => file.startsWith(build + "/") && !file.startsWith(build + "/checks/");
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
        const m = peer.call("import", [file]);
        modules.set(file, m);
        return m;
      }
    }
    return load.apply(this, arguments);
  };
}
