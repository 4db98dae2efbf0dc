// Every TypeScript compile of a grade in one process, run as the harness
// user before any code of the answer's runs:
// `node /opt/evalctl/compile.js ROOT JOBS`, JOBS a JSON array of
// {"kind": "emit"|"check", "tsconfig": PATH}, in the grade's running order.
//
// An "emit" job is `tsc -p TSCONFIG --outDir ROOT/N/build --pretty false`
// (N its index; the build directory gets its package.json as
// grader/runners.go's own compile gives it); a "check" job is
// typecheck.js's check of TSCONFIG. Both are TypeScript's own code, run as
// tsc and typecheck.js run it: the tsc job through tsc.js's own
// executeCommandLine (tsc.js is what the tsc command runs), the check job
// through typecheck.js's main with the same module. The one difference
// from a process per compile: the programs share the parsed and bound
// SourceFile objects of the files under /usr/ (the image's library .d.ts
// files, which nothing in the grade can change), each parsed once per set
// of compiler options instead of once per compile.
//
// ROOT is made here (it must not exist), mode 0700: what is built stays
// out of reach of the answer's processes until the grader moves a
// group's directory out for its tests. Each finished job prints one line
// of JSON, {"job": N, "stdout": TEXT, "status": EXIT, "seconds": S}: what
// the compile printed and its exit status. A job that throws ends the
// process, and the grader compiles it and the rest as before, one process
// each (grader/runners.go).
"use strict";
const fs = require("fs");
const Module = require("module");
const path = require("path");
const { main: typecheck } = require("/opt/evalctl/typecheck.js");

const TSC = "/usr/share/nodejs/typescript/lib/tsc.js";
const TAIL = "ts.executeCommandLine(ts.sys, ts.noop, ts.sys.args);";

// tscModule is tsc.js's compiler, without the command line run at its end.
function tscModule() {
  const text = fs.readFileSync(TSC, "utf8");
  const at = text.lastIndexOf(TAIL);
  if (at < 0 || text.slice(at + TAIL.length).trim() !== "") throw new Error("tsc.js does not end as expected");
  const m = new Module(TSC, module);
  m.filename = TSC;
  m.paths = Module._nodeModulePaths(path.dirname(TSC));
  m._compile(text.slice(0, at) + "module.exports = ts;\n", TSC);
  return m.exports;
}

// Options that say only where output goes, not how a file parses or binds.
const PLACE = new Set(["configFile", "configFilePath", "outDir", "noEmit", "pretty", "project"]);

// share makes every program ts creates take the SourceFiles of /usr/ from
// one cache, keyed by file, parse options and compiler options.
function share(ts) {
  const cache = new Map();
  const create = ts.createProgram;
  ts.createProgram = function (rootNamesOrOptions, options, host, oldProgram, configDiagnostics) {
    const o = Array.isArray(rootNamesOrOptions)
      ? { rootNames: rootNamesOrOptions, options, host, oldProgram, configFileParsingDiagnostics: configDiagnostics }
      : { ...rootNamesOrOptions };
    if (o.host) {
      let key;
      try {
        key = JSON.stringify(Object.keys(o.options).sort().filter((k) => !PLACE.has(k)).map((k) => [k, o.options[k]]));
      } catch (e) {
        key = undefined;
      }
      if (key !== undefined) o.host = sharing(o.host, key);
    }
    return create(o);
  };
  function sharing(host, key) {
    const get = host.getSourceFile;
    host.getSourceFile = function (f, lang, onError, fresh) {
      if (fresh || !ts.sys.resolvePath(f).startsWith("/usr/")) return get.call(host, f, lang, onError, fresh);
      const k = JSON.stringify([f, lang, key]);
      if (cache.has(k)) return cache.get(k);
      const file = get.call(host, f, lang, onError, fresh);
      if (file) cache.set(k, file);
      return file;
    };
    return host;
  }
}

function run(root, jobs) {
  fs.mkdirSync(root, { mode: 0o700 });
  const ts = tscModule();
  share(ts);
  jobs.forEach((job, n) => {
    const start = process.hrtime.bigint();
    let out = "";
    let status;
    if (job.kind === "emit") {
      const dir = path.join(root, String(n));
      fs.mkdirSync(dir, { mode: 0o755 });
      const build = path.join(dir, "build");
      const system = { ...ts.sys, write: (s) => (out += s), exit: (code) => (status = code === undefined ? 0 : code) };
      ts.executeCommandLine(system, ts.noop, ["-p", job.tsconfig, "--outDir", build, "--pretty", "false"]);
      if (status === undefined) throw new Error("tsc did not finish");
      fs.mkdirSync(build, { recursive: true, mode: 0o755 });
      fs.writeFileSync(path.join(build, "package.json"), '{"type": "commonjs"}\n', { flag: "wx" });
    } else if (job.kind === "check") {
      status = typecheck(ts, job.tsconfig, (s) => (out += s)) || 0;
    } else {
      throw new Error("unknown job kind " + job.kind);
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    fs.writeSync(1, JSON.stringify({ job: n, stdout: out, status, seconds }) + "\n");
  });
}

run(process.argv[2], JSON.parse(process.argv[3]));
