// evalctl's process boundary for node: frozen tests in a trusted process (the
// harness user), the answer's modules in an untrusted one (the command user),
// both loading this module from the image. The node counterpart of
// boundary.py.
//
// - Calls are synchronous on both sides: a worker thread owns the socket and
//   hands each message to the main thread, which blocks in Atomics.wait and
//   takes it with receiveMessageOnPort while it waits for a reply (serving
//   the other side's nested calls meanwhile: callbacks), and gets it as an
//   ordinary event when idle. A request that arrives while idle is answered
//   only once this side's microtasks have run (setImmediate), so promise
//   chains spanning both processes run in the order they would in one.
// - Plain values cross by value, rebuilt from tagged JSON: undefined, null,
//   booleans, numbers (NaN, -0, Infinity), strings, bigints, and arrays,
//   objects, Maps, Sets and Dates of exactly the builtin prototypes whose
//   properties are plain data. Errors cross as local errors of the same name,
//   message and own data properties, with a stand-in prototype chain (builtin
//   errors map to the builtins), so instanceof works with the answer's own
//   classes. Promises cross as promises that settle when the original does.
//   Everything else (functions, classes, class instances, rigged objects)
//   crosses as a remote handle: a Proxy whose every operation is forwarded.
// - A handle never equals a plain value: its prototype chain never is a
//   plain value's, Symbol.toPrimitive is local (NaN for numbers, an opaque
//   text for ==), so deepStrictEqual, strictEqual and == see a foreign object.
// - What a side sent comes back as itself (identity kept), so a test can
//   check that a rejection is the very object it handed in.
// - The trusted side never hands out Function, eval, process, require or the
//   global object (builtins cross by name and map to the receiver's own),
//   never takes Function from the other side, and refuses the answer's
//   writes to its objects (the answer reads and calls what the tests hand
//   it, as a test's callbacks need, but cannot rewrite a test's fake).
//   Nothing is evaluated: the receiving side builds only plain values, its
//   own errors and proxies from the data.
"use strict";
const { Worker, MessageChannel, receiveMessageOnPort } = require("worker_threads");

const MAX_DEPTH = 200;

class BoundaryError extends Error {}

// What the tests' side met and could not carry to the answer since the
// running test started, in order (node_tests.js reads and clears it per
// test, and marks a failed test that met one): a symbol, a value nested
// too deeply, a prototype chain too long, and what the tests' process
// never hands out (its console, process, require...) when the tests
// themselves passed it. Run in one process the call would work, so such a
// failure says nothing of the answer. Only the trusted side notes; what the
// answer's side cannot send is the answer's failure.
const unrepresentable = [];

const IO = `
const { workerData, parentPort } = require("worker_threads");
const net = require("net");
const { port, flag, fd, path } = workerData;
const wake = () => { Atomics.add(flag, 0, 1); Atomics.notify(flag, 0); };
let sock, buf = Buffer.alloc(0), closed = false;
function close() { if (closed) return; closed = true; port.postMessage(null); wake(); }
function start(s) {
  sock = s;
  sock.on("data", (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    while (buf.length >= 4) {
      const n = buf.readUInt32BE(0);
      if (n > (256 << 20)) { sock.destroy(); close(); return; }
      if (buf.length < 4 + n) break;
      port.postMessage(buf.toString("utf8", 4, 4 + n));
      buf = buf.subarray(4 + n);
      wake();
    }
  });
  sock.on("close", close);
  sock.on("error", () => {});
  port.postMessage("ready"); wake();
}
port.on("message", (m) => {
  const b = Buffer.from(m, "utf8"), h = Buffer.alloc(4);
  h.writeUInt32BE(b.length);
  if (sock && !closed) sock.write(Buffer.concat([h, b]));
});
if (fd != null) start(new net.Socket({ fd, readable: true, writable: true }));
else {
  const deadline = Date.now() + 30000;
  const attempt = () => {
    const s = net.connect(path);
    s.once("connect", () => start(s));
    s.once("error", () => { s.destroy(); if (Date.now() > deadline) close(); else setTimeout(attempt, 10); });
  };
  attempt();
}
`;

// Builtins cross by name and map to the receiver's own.
const BUILTIN_NAMES = ["Object", "Function", "Array", "Error", "TypeError", "RangeError", "SyntaxError",
  "ReferenceError", "EvalError", "URIError", "AggregateError", "Promise", "Map", "Set", "WeakMap", "WeakSet",
  "Date", "RegExp", "Symbol", "Number", "String", "Boolean", "BigInt", "ArrayBuffer", "Uint8Array",
  "EventTarget", "Event", "AbortController", "AbortSignal", "DOMException", "Math", "JSON", "Reflect",
  "Proxy", "Atomics", "Intl"];
const GEN = Object.getPrototypeOf(function* () {});
const AGEN = Object.getPrototypeOf(async function* () {});
const builtinByName = new Map();
const nameOfBuiltin = new Map();
function addBuiltin(name, v) {
  if (v === undefined || v === null || nameOfBuiltin.has(v)) return;
  builtinByName.set(name, v);
  nameOfBuiltin.set(v, name);
}
for (const n of BUILTIN_NAMES) {
  const v = globalThis[n];
  addBuiltin(n, v);
  if (typeof v === "function" && v.prototype) addBuiltin(n + ".prototype", v.prototype);
}
addBuiltin("Generator", GEN);
addBuiltin("Generator.prototype", GEN.prototype);
addBuiltin("AsyncGenerator", AGEN);
addBuiltin("AsyncGenerator.prototype", AGEN.prototype);
addBuiltin("AsyncFunction.prototype", Object.getPrototypeOf(async function () {}));
addBuiltin("IteratorPrototype", Object.getPrototypeOf(GEN.prototype));
addBuiltin("AsyncIteratorPrototype", Object.getPrototypeOf(AGEN.prototype));
addBuiltin("ArrayIteratorPrototype", Object.getPrototypeOf([][Symbol.iterator]()));

const WELL_KNOWN = ["iterator", "asyncIterator", "hasInstance", "toStringTag", "toPrimitive", "species"];

// What the trusted side never hands out: each evaluates code or reaches the
// whole process.
// The console and the standard streams are the reporter's: whoever holds
// them writes the report.
const FORBIDDEN = new Set([Function, eval, globalThis, process, console, process.stdout, process.stderr,
  Object.getPrototypeOf(async function () {}).constructor, GEN.constructor, AGEN.constructor,
  typeof require === "function" ? require : undefined, require("module")]);
const FORBIDDEN_NAMES = new Map([[Function, "Function"], [eval, "eval"], [globalThis, "globalThis"], [process, "process"],
  [console, "console"], [process.stdout, "process.stdout"], [process.stderr, "process.stderr"],
  [Object.getPrototypeOf(async function () {}).constructor, "AsyncFunction"], [GEN.constructor, "GeneratorFunction"],
  [AGEN.constructor, "AsyncGeneratorFunction"], [require, "require"], [require("module"), "module"]]);

// Builtin prototypes whose methods work only on their own kind of object
// (internal slots): on the tests' objects the answer gets these methods
// pinned to the object it read them from (next() of the tests' generator),
// never as free functions.
// The platform's classes with internal slots (an AbortSignal the tests
// pass, its EventTarget methods, a Map subclass's Map methods) are served
// the same way: their accessors read on the tests' object, their methods
// pinned to it.
const SLOT_PROTOS = new Set([GEN.prototype, AGEN.prototype, Object.getPrototypeOf([][Symbol.iterator]()),
  Object.getPrototypeOf(new Map()[Symbol.iterator]()), Object.getPrototypeOf(new Set()[Symbol.iterator]()),
  Object.getPrototypeOf(""[Symbol.iterator]()),
  ...["AbortSignal", "AbortController", "EventTarget", "Event", "DOMException", "Map", "Set", "WeakMap", "WeakSet",
    "Date", "RegExp", "ArrayBuffer", "Uint8Array"].map((n) => globalThis[n] && globalThis[n].prototype).filter(Boolean)]);

// What a get on the tests' object answers when the property is not the
// object's own nor its class's (a builtin's, such as Object.prototype's):
// the answer's side then looks it up on its own builtins.
const NOT_FOUND = Symbol("evalctl.notFound");

const REMOTE_OBJECT = Object.freeze(Object.create(Object.prototype, {
  [Symbol.toStringTag]: { value: "RemoteObject" },
}));

class Peer {
  // trusted: whether this side is the tests' (it refuses to hand out the
  // FORBIDDEN values and treats everything received as hostile).
  constructor({ trusted, fd, path, keep }) {
    this.trusted = trusted;
    this.forceKeep = keep === true; // the answer's side lives as long as its connection
    this.asHandle = new WeakSet(); // objects sent as handles even if plain (modules)
    this.mine = new Map(); // id -> object sent
    this.mineIds = new WeakMap(); // object sent -> id
    this.theirs = new Map(); // their id -> proxy / error / promise
    this.theirIds = new WeakMap(); // what we built from their data -> their id
    this.nextId = 1;
    this.seq = 0;
    this.stash = new Map();
    this.closed = false;
    this.waiting = 0;
    this.mirrors = new Map(); // their promise id -> {resolve, reject}
    this.early = new Map(); // their promise id -> [ok, value] settled before we saw it
    this.forwarded = new WeakSet();
    this.pins = new WeakMap(); // the tests' iterator -> key -> its pinned method
    this.mirrored = new WeakSet(); // our mirrors of their promises
    this.copies = new WeakSet(); // what we built from their plain data (it goes back with its content)
    this.sending = new Set(); // copies being encoded (a cycle goes back as a reference)
    this.busy = true; // the other side's last word on pending work
    this.onClose = () => {};
    this.handing = 0; // > 0 while the tests' own arguments are encoded (not what the answer reached)
    this.flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(IO, { eval: true, workerData: { port: port2, flag: this.flag, fd, path }, transferList: [port2] });
    this.worker.unref();
    const first = this.recvSync();
    if (first !== "ready") throw new BoundaryError("evalctl: cannot reach the answer's process");
    this.port.on("message", (m) => this.onAsync(m));
    this.updateKeep();
  }

  keepAlive(on) {
    if (on) this.port.ref();
    else this.port.unref();
  }

  updateKeep() {
    this.keepAlive(this.forceKeep || (this.mirrors.size > 0 && this.busy));
  }

  // --- transport ------------------------------------------------------------

  send(obj) {
    if (this.closed) throw new BoundaryError("evalctl: the answer's process ended");
    // Whether this side may still settle promises on its own: it is in the
    // middle of a call (its microtasks run when the call returns) or it has
    // timers or I/O of its own pending.
    obj.b = this.waiting > 0 || hasPendingWork();
    this.port.postMessage(JSON.stringify(obj));
  }

  recvSync() {
    for (;;) {
      const v = Atomics.load(this.flag, 0);
      const got = receiveMessageOnPort(this.port);
      if (got) return got.message;
      Atomics.wait(this.flag, 0, v);
    }
  }

  parse(raw) {
    if (raw === null) {
      this.close();
      return null;
    }
    let m;
    try {
      m = JSON.parse(raw);
    } catch (e) {
      throw new BoundaryError("evalctl: malformed message across the boundary");
    }
    if (m === null || typeof m !== "object" || Array.isArray(m)) throw new BoundaryError("evalctl: malformed message across the boundary");
    this.busy = m.b === true;
    return m;
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    const err = new BoundaryError("evalctl: the answer's process ended before it answered");
    for (const [, m] of this.mirrors) m.reject(err);
    this.mirrors.clear();
    this.keepAlive(false);
    this.onClose();
  }

  onAsync(raw) {
    if (raw === "ready") return;
    const m = this.parse(raw);
    if (m === null) return;
    if (m.t === "r") {
      this.stash.set(m.id, m);
      return;
    }
    if (m.t !== "q") return;
    const reply = this.serve(m);
    // Let this side's microtasks run (and make their calls) first.
    setImmediate(() => {
      try {
        this.send(reply);
      } catch (e) {
        /* closed */
      }
      this.updateKeep();
    });
  }

  call(op, args) {
    if (this.closed) throw new BoundaryError("evalctl: the answer's process ended");
    const id = ++this.seq;
    this.send({ t: "q", id, op, a: args });
    this.waiting++;
    // What this side encodes while it serves the other's requests meanwhile
    // is not what it handed over (a conversion during encHanded can call).
    const handing = this.handing;
    this.handing = 0;
    try {
      for (;;) {
        const got = this.stash.get(id);
        if (got) {
          this.stash.delete(id);
          if (Array.isArray(got.w)) {
            for (const w of got.w) if (Array.isArray(w) && w[0] === "w") this.dec(w);
          }
          if (got.e !== undefined) throw this.dec(got.e);
          return this.dec(got.v);
        }
        const m = this.parse(this.recvSync());
        if (m === null) throw new BoundaryError("evalctl: the answer's process ended during a call");
        if (m.t === "q") this.send(this.serve(m));
        else if (m.t === "r") this.stash.set(m.id, m);
      }
    } finally {
      this.handing = handing;
      this.waiting--;
      this.updateKeep();
    }
  }

  // serve performs one request of the other side. A call's arguments that
  // are copies of the other side's containers go back with the reply, with
  // their content now (encBack): what the callee changed in them is changed
  // in the caller's originals, returned or not, thrown or not.
  serve(m) {
    const args = [];
    const back = (r) => {
      const w = args.filter((x) => this.copies.has(x)).map((x) => this.enc(x));
      if (w.length) r.w = w;
      return r;
    };
    try {
      const v = this.perform(m.op, Array.isArray(m.a) ? m.a : [], args);
      return back({ t: "r", id: m.id, v: this.enc(v) });
    } catch (e) {
      try {
        return back({ t: "r", id: m.id, e: this.enc(e) });
      } catch (e2) {
        return { t: "r", id: m.id, e: this.enc(new Error("evalctl: a value could not cross the boundary")) };
      }
    }
  }

  obj(n) {
    if (!this.mine.has(n)) throw new BoundaryError("evalctl: no such object across the boundary");
    return this.mine.get(n);
  }

  perform(op, a, args = []) {
    switch (op) {
      case "get": return this.read(this.obj(a[0]), this.key(a[1]));
      case "set":
        this.writable();
        this.obj(a[0])[this.key(a[1])] = this.dec(a[2]);
        return undefined;
      case "has": return this.trusted ? this.lookup(this.obj(a[0]), this.key(a[1])) !== undefined : this.key(a[1]) in this.obj(a[0]);
      case "delete":
        this.writable();
        return delete this.obj(a[0])[this.key(a[1])];
      case "keys": return Reflect.ownKeys(this.obj(a[0])).filter((k) => typeof k === "string");
      case "desc": {
        const d = Reflect.getOwnPropertyDescriptor(this.obj(a[0]), this.key(a[1]));
        if (!d) return undefined;
        return { value: "value" in d ? d.value : d.get ? d.get.call(this.obj(a[0])) : undefined, enumerable: !!d.enumerable, writable: d.writable !== false };
      }
      case "apply": {
        const f = this.fn(a[0]), self = this.self(this.dec(a[1]));
        args.push(...this.args(a[2]));
        return Reflect.apply(f, self, args.slice());
      }
      case "construct": {
        const f = this.fn(a[0]);
        args.push(...this.args(a[1]));
        return Reflect.construct(f, args.slice());
      }
      case "str": return String(this.obj(a[0]));
      case "settle": {
        const m = this.mirrors.get(a[0]);
        const v = this.dec(a[2]);
        if (m) {
          this.mirrors.delete(a[0]);
          if (a[1] === true) m.resolve(v);
          else m.reject(v);
        } else if (!this.theirs.has(a[0])) {
          // Settled before the reply that hands it over arrived.
          this.early.set(this.num(a[0]), [a[1] === true, v]);
        }
        return undefined;
      }
      case "uncaught": {
        const err = this.dec(a[1]);
        if (a[0] === "rejection") Promise.reject(err);
        else setImmediate(() => { throw err; });
        return undefined;
      }
      default:
        if (this.handlers && Object.prototype.hasOwnProperty.call(this.handlers, op)) return this.handlers[op](...a);
        throw new BoundaryError("evalctl: unknown operation across the boundary");
    }
  }

  // The answer reads and calls what the tests hand it, but never changes
  // it: a test's fake source, its bookkeeping, its classes stay the tests'.
  writable() {
    if (this.trusted) throw new TypeError("evalctl: the answer cannot change the tests' objects");
  }

  // lookup finds where key k of the tests' object o is defined: on o or
  // on a prototype of the tests' own (a class of theirs), never on a
  // builtin's prototype; undefined if it is not there.
  lookup(o, k) {
    for (let p = o, i = 0; p !== null && i <= MAX_DEPTH; p = Reflect.getPrototypeOf(p), i++) {
      if (p !== o && nameOfBuiltin.has(p)) {
        // Through the slot-bearing builtins (AbortSignal.prototype, then
        // EventTarget.prototype), never past another builtin.
        if (!SLOT_PROTOS.has(p)) return undefined;
        const d = Reflect.getOwnPropertyDescriptor(p, k);
        if (d) return [p, d];
        continue;
      }
      const d = Reflect.getOwnPropertyDescriptor(p, k);
      if (d) return [p, d];
    }
    return undefined;
  }

  // read is a get. On the answer's side it is the object's own; on the
  // tests' side it sees only what lookup finds (the answer holds only what
  // the tests handed it: their objects and their classes' methods, never
  // the builtins' methods and accessors, which it has of its own).
  read(o, k) {
    if (!this.trusted) return o[k];
    const found = this.lookup(o, k);
    if (found === undefined) return NOT_FOUND;
    const [p, d] = found;
    const v = "value" in d ? d.value : d.get ? Reflect.apply(d.get, o, []) : undefined;
    if (SLOT_PROTOS.has(p) && typeof v === "function") return this.pinned(o, k, v);
    return v;
  }

  // pinned is method m of the tests' iterator o with o as its this,
  // whatever this the answer calls it with.
  pinned(o, k, m) {
    let byKey = this.pins.get(o);
    if (!byKey) this.pins.set(o, (byKey = new Map()));
    if (!byKey.has(k)) byKey.set(k, (...args) => Reflect.apply(m, o, args));
    return byKey.get(k);
  }

  // self is the this the answer calls one of the tests' functions with:
  // never one of the tests' builtins, which it can only name.
  self(v) {
    if (this.trusted && (typeof v === "object" || typeof v === "function") && v !== null && nameOfBuiltin.has(v)) {
      throw new TypeError("evalctl: the tests' functions do not run with a builtin as this");
    }
    return v;
  }

  fn(n) {
    const f = this.obj(n);
    if (typeof f !== "function") throw new TypeError("not a function");
    return f;
  }

  args(a) {
    if (!Array.isArray(a)) throw new BoundaryError("evalctl: malformed arguments");
    return a.map((x) => this.dec(x));
  }

  key(k) {
    if (typeof k === "string") return k;
    if (Array.isArray(k) && k[0] === "s" && WELL_KNOWN.includes(k[1])) return Symbol[k[1]];
    throw new BoundaryError("evalctl: malformed property key");
  }

  // --- values -----------------------------------------------------------------

  register(v) {
    let n = this.mineIds.get(v);
    if (n !== undefined) return n;
    n = this.nextId++;
    this.mine.set(n, v);
    this.mineIds.set(v, n);
    return n;
  }

  // cannot notes, on the tests' side, a construct it cannot carry.
  cannot(what) {
    if (this.trusted) unrepresentable.push(what);
  }

  // encHanded encodes what this side itself passes in a call (its
  // arguments, the this), not what the other side reached through it.
  encHanded(vs) {
    this.handing++;
    try {
      return vs.map((v) => this.enc(v));
    } finally {
      this.handing--;
    }
  }

  encKey(k) {
    if (typeof k === "string") return k;
    for (const w of WELL_KNOWN) if (Symbol[w] === k) return ["s", w];
    return undefined;
  }

  enc(v, depth = 0) {
    if (depth > MAX_DEPTH) {
      this.cannot("a value nested deeper than " + MAX_DEPTH + " levels");
      throw new RangeError("evalctl: value nested too deeply to cross the boundary");
    }
    switch (typeof v) {
      case "undefined": return ["u"];
      case "boolean": case "string": return v;
      case "number":
        if (Number.isFinite(v) && !Object.is(v, -0)) return v;
        return ["n", Object.is(v, -0) ? "-0" : String(v)];
      case "bigint": return ["i", v.toString()];
      case "symbol": {
        if (v === NOT_FOUND) return ["N"];
        const k = this.encKey(v);
        if (k === undefined) {
          this.cannot("a symbol (" + String(v.description === undefined ? "" : v.description).slice(0, 60) + ")");
          throw new TypeError("evalctl: a symbol cannot cross the boundary");
        }
        return k;
      }
    }
    if (v === null) return null;
    const theirs = this.theirIds.get(v);
    if (theirs !== undefined) {
      if (this.copies.has(v)) return this.encBack(v, theirs, depth);
      // A mirror of the other side's promise going back to it: the owner
      // holds the original again, and its handlers say whether the
      // rejection is handled (the mirror is not reported here as well).
      if (this.mirrored.has(v)) v.catch(() => {});
      return ["r", theirs];
    }
    const bname = nameOfBuiltin.get(v);
    if (bname !== undefined) return ["B", bname];
    if (this.trusted && FORBIDDEN.has(v)) {
      if (this.handing > 0) this.cannot("the tests' " + FORBIDDEN_NAMES.get(v) + " handed to the answer");
      throw new TypeError("evalctl: the tests' process does not hand this out");
    }
    const proto = Object.getPrototypeOf(v);
    if (this.asHandle.has(v)) return ["h", this.register(v), this.encProto(proto, depth)];
    if (typeof v === "function") return ["f", this.register(v), this.encProto(proto, depth)];
    if (v instanceof Promise && proto === Promise.prototype) return this.encPromise(v);
    if (isError(v)) return this.encError(v, depth);
    if (Array.isArray(v) && proto === Array.prototype && isPlainArray(v)) {
      return ["a", this.register(v), Array.from(v, (x) => this.enc(x, depth + 1))];
    }
    if ((proto === Object.prototype || proto === null) && isPlainObject(v)) {
      return ["o", this.register(v), proto === null, Object.keys(v).map((k) => [k, this.enc(v[k], depth + 1)])];
    }
    if (proto === Date.prototype && Object.getOwnPropertyNames(v).length === 0) return ["D", this.register(v), v.getTime()];
    if (proto === Map.prototype && Reflect.ownKeys(v).length === 0) {
      return ["M", this.register(v), Array.from(v, ([k, x]) => [this.enc(k, depth + 1), this.enc(x, depth + 1)])];
    }
    if (proto === Set.prototype && Reflect.ownKeys(v).length === 0) return ["S", this.register(v), Array.from(v, (x) => this.enc(x, depth + 1))];
    return ["h", this.register(v), this.encProto(proto, depth)];
  }

  // encBack sends back a copy of the other side's plain container with
  // its content now: the other side updates its original in place and
  // gets it back (what a callee changes in a container it was passed is
  // changed for the caller too, and identity holds).
  encBack(v, id, depth) {
    if (this.sending.has(v)) return ["r", id];
    this.sending.add(v);
    try {
      const proto = Object.getPrototypeOf(v);
      const own = Reflect.ownKeys(v).length;
      if (proto === Array.prototype && Array.isArray(v) && isPlainArray(v)) return ["w", id, "a", Array.from(v, (x) => this.enc(x, depth + 1))];
      if ((proto === Object.prototype || proto === null) && isPlainObject(v)) return ["w", id, "o", Object.keys(v).map((k) => [k, this.enc(v[k], depth + 1)])];
      if (proto === Map.prototype && own === 0) return ["w", id, "M", Array.from(v, ([k, x]) => [this.enc(k, depth + 1), this.enc(x, depth + 1)])];
      if (proto === Set.prototype && own === 0) return ["w", id, "S", Array.from(v, (x) => this.enc(x, depth + 1))];
      if (proto === Date.prototype && own === 0) return ["w", id, "D", v.getTime()];
      return ["r", id];
    } finally {
      this.sending.delete(v);
    }
  }

  encProto(p, depth) {
    if (p === null) return null;
    const b = nameOfBuiltin.get(p);
    if (b !== undefined) return ["B", b];
    const theirs = this.theirIds.get(p);
    if (theirs !== undefined) return ["r", theirs];
    if (depth > MAX_DEPTH) {
      this.cannot("a prototype chain longer than " + MAX_DEPTH + " levels");
      throw new RangeError("evalctl: prototype chain too long to cross the boundary");
    }
    return [typeof p === "function" ? "f" : "h", this.register(p), this.encProto(Object.getPrototypeOf(p), depth + 1)];
  }

  encPromise(p) {
    const n = this.register(p);
    if (!this.forwarded.has(p)) {
      this.forwarded.add(p);
      const settle = (ok, x) => {
        try {
          this.call("settle", [n, ok, this.enc(x)]);
        } catch (e) {
          /* the other side is gone */
        }
      };
      p.then((x) => settle(true, x), (x) => settle(false, x));
    }
    return ["p", n];
  }

  encError(e, depth) {
    const n = this.register(e);
    const props = [];
    // Own data properties, enumerable or not (an AggregateError's errors,
    // a cause), keep their value and whether they are enumerable.
    for (const k of Object.getOwnPropertyNames(e)) {
      const d = Object.getOwnPropertyDescriptor(e, k);
      if (d && "value" in d && k !== "name" && k !== "message" && k !== "stack") props.push([k, this.enc(d.value, depth + 1), d.enumerable === true]);
    }
    let name, message, stack;
    try { name = String(e.name); } catch (x) { name = "Error"; }
    try { message = String(e.message); } catch (x) { message = ""; }
    try { stack = typeof e.stack === "string" ? e.stack : undefined; } catch (x) { stack = undefined; }
    return ["e", n, this.encProto(Object.getPrototypeOf(e), depth), name, message, stack === undefined ? null : stack, props];
  }

  dec(x, depth = 0) {
    if (depth > MAX_DEPTH) throw new BoundaryError("evalctl: value nested too deeply");
    if (x === null || typeof x === "boolean" || typeof x === "string") return x;
    if (typeof x === "number") return x;
    if (!Array.isArray(x) || typeof x[0] !== "string") throw new BoundaryError("evalctl: malformed value across the boundary");
    switch (x[0]) {
      case "u": return undefined;
      case "n": {
        const v = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity, "-0": -0 }[x[1]];
        if (v === undefined) throw new BoundaryError("evalctl: malformed number");
        return v;
      }
      case "i": return BigInt(String(x[1]));
      case "s": return this.key(x);
      case "B": {
        if (!builtinByName.has(x[1])) throw new BoundaryError("evalctl: unknown builtin");
        // Function would let the answer make code here (Function.prototype.call
        // with Function as this): the tests' side never builds it from data.
        if (this.trusted && x[1] === "Function") throw new TypeError("evalctl: Function does not cross into the tests' process");
        return builtinByName.get(x[1]);
      }
      case "r": return this.obj(x[1]);
      case "w": return this.writeBack(x, depth);
      case "N":
        if (this.trusted) throw new BoundaryError("evalctl: malformed value across the boundary");
        return NOT_FOUND;
      case "a": {
        const out = x[2].map((y) => this.dec(y, depth + 1));
        this.theirIds.set(out, this.num(x[1]));
        this.copies.add(out);
        return out;
      }
      case "o": {
        const out = x[2] === true ? Object.create(null) : {};
        for (const [k, y] of x[3]) {
          if (typeof k !== "string") throw new BoundaryError("evalctl: malformed object");
          Object.defineProperty(out, k, { value: this.dec(y, depth + 1), writable: true, enumerable: true, configurable: true });
        }
        this.theirIds.set(out, this.num(x[1]));
        this.copies.add(out);
        return out;
      }
      case "D": {
        const out = new Date(Number(x[2]));
        this.theirIds.set(out, this.num(x[1]));
        this.copies.add(out);
        return out;
      }
      case "M": {
        const out = new Map(x[2].map(([k, y]) => [this.dec(k, depth + 1), this.dec(y, depth + 1)]));
        this.theirIds.set(out, this.num(x[1]));
        this.copies.add(out);
        return out;
      }
      case "S": {
        const out = new Set(x[2].map((y) => this.dec(y, depth + 1)));
        this.theirIds.set(out, this.num(x[1]));
        this.copies.add(out);
        return out;
      }
      case "f": case "h": return this.handle(x, depth);
      case "p": return this.mirror(this.num(x[1]));
      case "e": return this.error(x, depth);
    }
    throw new BoundaryError("evalctl: malformed value across the boundary");
  }

  // writeBack takes back one of our plain containers with the content the
  // other side gave it: updated in place and returned as itself, or, if it
  // cannot be (frozen, or no longer of its kind), a fresh one.
  writeBack(x, depth) {
    const orig = this.obj(x[1]);
    const kind = x[2], d = (y) => this.dec(y, depth + 1);
    if (!Array.isArray(x[3]) && kind !== "D") throw new BoundaryError("evalctl: malformed value across the boundary");
    try {
      switch (kind) {
        case "a": {
          const vals = x[3].map(d);
          if (!Array.isArray(orig) || !Object.isExtensible(orig)) return vals;
          orig.length = vals.length;
          for (let i = 0; i < vals.length; i++) orig[i] = vals[i];
          return orig;
        }
        case "o": {
          const entries = x[3].map(([k, y]) => {
            if (typeof k !== "string") throw new BoundaryError("evalctl: malformed object");
            return [k, d(y)];
          });
          if (typeof orig !== "object" || Array.isArray(orig) || !Object.isExtensible(orig)) return fromEntries(entries);
          const keep = new Set(entries.map(([k]) => k));
          for (const k of Object.keys(orig)) if (!keep.has(k)) delete orig[k];
          for (const [k, v] of entries) Object.defineProperty(orig, k, { value: v, writable: true, enumerable: true, configurable: true });
          return orig;
        }
        case "M": {
          const vals = x[3].map(([k, y]) => [d(k), d(y)]);
          if (!(orig instanceof Map) || Object.isFrozen(orig)) return new Map(vals);
          orig.clear();
          for (const [k, v] of vals) orig.set(k, v);
          return orig;
        }
        case "S": {
          const vals = x[3].map(d);
          if (!(orig instanceof Set) || Object.isFrozen(orig)) return new Set(vals);
          orig.clear();
          for (const v of vals) orig.add(v);
          return orig;
        }
        case "D":
          if (!(orig instanceof Date)) return new Date(Number(x[3]));
          orig.setTime(Number(x[3]));
          return orig;
      }
    } catch (e) {
      if (e instanceof BoundaryError) throw e;
      return orig; // a frozen original the update could not change
    }
    throw new BoundaryError("evalctl: malformed value across the boundary");
  }

  num(n) {
    if (!Number.isSafeInteger(n) || n <= 0) throw new BoundaryError("evalctl: malformed object number");
    return n;
  }

  decProto(x, depth) {
    if (x === null) return null;
    const p = this.dec(x, depth + 1);
    if (p === Object.prototype) return REMOTE_OBJECT;
    if ((typeof p !== "object" && typeof p !== "function") || p === null) throw new BoundaryError("evalctl: malformed prototype");
    return p;
  }

  handle(x, depth) {
    const n = this.num(x[1]);
    const have = this.theirs.get(n);
    if (have) return have;
    const fn = x[0] === "f";
    const proto = this.decProto(x[2], depth);
    const peer = this;
    const target = fn ? function () {} : Object.create(null);
    const ek = (k) => peer.encKey(k);
    const p = new Proxy(target, {
      get(t, k, receiver) {
        if (k === Symbol.toPrimitive) return (hint) => (hint === "number" ? NaN : hint === "string" ? peer.str(n) : "[remote object]");
        const kk = ek(k);
        if (kk === undefined) return undefined;
        const v = peer.call("get", [n, kk]);
        // Not the tests' own: this side's builtins answer.
        if (v === NOT_FOUND) return proto === null ? undefined : Reflect.get(proto, k, receiver);
        return v;
      },
      set(t, k, v) {
        const kk = ek(k);
        if (kk === undefined) return false;
        peer.call("set", [n, kk, ...peer.encHanded([v])]);
        return true;
      },
      has(t, k) {
        const kk = ek(k);
        if (kk !== undefined && peer.call("has", [n, kk]) === true) return true;
        return !peer.trusted && proto !== null && k in proto;
      },
      deleteProperty(t, k) {
        const kk = ek(k);
        return kk !== undefined && peer.call("delete", [n, kk]) === true;
      },
      ownKeys(t) {
        const keys = peer.call("keys", [n]);
        const out = Array.isArray(keys) ? keys.filter((k) => typeof k === "string") : [];
        for (const k of Reflect.ownKeys(t)) {
          const d = Reflect.getOwnPropertyDescriptor(t, k);
          if (!d.configurable && !out.includes(k)) out.push(k);
        }
        return out;
      },
      getOwnPropertyDescriptor(t, k) {
        const kk = ek(k);
        const local = Reflect.getOwnPropertyDescriptor(t, k);
        const d = kk === undefined ? undefined : peer.call("desc", [n, kk]);
        if (local && !local.configurable) return { value: d ? d.value : undefined, writable: true, enumerable: false, configurable: false };
        if (!d || typeof d !== "object") return undefined;
        return { value: d.value, writable: d.writable !== false, enumerable: d.enumerable === true, configurable: true };
      },
      defineProperty(t, k, d) {
        const kk = ek(k);
        if (kk === undefined || !("value" in d)) return false;
        peer.call("set", [n, kk, ...peer.encHanded([d.value])]);
        return true;
      },
      getPrototypeOf() { return proto; },
      setPrototypeOf() { return false; },
      preventExtensions() { return false; },
      isExtensible() { return true; },
      apply(t, self, args) {
        const [s, ...a] = peer.encHanded([self, ...args]);
        return peer.call("apply", [n, s, a]);
      },
      construct(t, args) { return peer.call("construct", [n, peer.encHanded(args)]); },
    });
    this.theirs.set(n, p);
    this.theirIds.set(p, n);
    return p;
  }

  str(n) {
    const s = this.call("str", [n]);
    return typeof s === "string" ? s : "[remote object]";
  }

  mirror(n) {
    const have = this.theirs.get(n);
    if (have) return have;
    let resolve, reject;
    const p = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const early = this.early.get(n);
    if (early) {
      this.early.delete(n);
      if (early[0]) resolve(early[1]);
      else reject(early[1]);
    } else {
      this.mirrors.set(n, { resolve, reject });
    }
    this.theirs.set(n, p);
    this.theirIds.set(p, n);
    this.mirrored.add(p);
    this.updateKeep();
    return p;
  }

  error(x, depth) {
    const n = this.num(x[1]);
    const have = this.theirs.get(n);
    if (have) return have;
    const proto = this.decProto(x[2], depth);
    const e = new Error(String(x[4]));
    Object.setPrototypeOf(e, proto);
    Object.defineProperty(e, "name", { value: String(x[3]), writable: true, enumerable: false, configurable: true });
    Object.defineProperty(e, "message", { value: String(x[4]), writable: true, enumerable: false, configurable: true });
    if (typeof x[5] === "string") Object.defineProperty(e, "stack", { value: x[5], writable: true, enumerable: false, configurable: true });
    for (const [k, y, en] of x[6]) {
      if (typeof k !== "string") throw new BoundaryError("evalctl: malformed error");
      Object.defineProperty(e, k, { value: this.dec(y, depth + 1), writable: true, enumerable: en !== false, configurable: true });
    }
    this.theirs.set(n, e);
    this.theirIds.set(e, n);
    return e;
  }
}

function fromEntries(entries) {
  const out = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
  return out;
}

function isError(v) {
  try {
    return v instanceof Error || Object.prototype.toString.call(v) === "[object Error]";
  } catch (e) {
    return false;
  }
}

function isPlainArray(v) {
  const keys = Reflect.ownKeys(v);
  if (keys.length !== v.length + 1) return false;
  for (const k of keys) {
    if (k === "length") continue;
    if (typeof k !== "string") return false;
    const d = Object.getOwnPropertyDescriptor(v, k);
    if (!("value" in d)) return false;
  }
  return true;
}

function isPlainObject(v) {
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== "string") return false;
    const d = Object.getOwnPropertyDescriptor(v, k);
    if (!("value" in d) || !d.enumerable) return false;
    // An object that brings its own conversions or then stays a handle.
    if ((k === "valueOf" || k === "toString" || k === "toJSON" || k === "then" || k === "constructor" || k === "__proto__") && typeof d.value === "function") return false;
  }
  return true;
}

// hasPendingWork says whether this process has timers or immediates of its
// own waiting (so the other side keeps waiting for its promises).
function hasPendingWork() {
  if (typeof process.getActiveResourcesInfo !== "function") return true;
  return process.getActiveResourcesInfo().some((r) => r === "Timeout" || r === "Immediate" || r === "FSReqCallback" || r === "TCPWrap" || r === "ProcessWrap");
}

module.exports = { Peer, BoundaryError, unrepresentable };
