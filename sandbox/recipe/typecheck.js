// The typecheck groups' compiler, run as the harness user:
// `node /opt/evalctl/typecheck.js TSCONFIG`. It is tsc -p TSCONFIG --noEmit
// with one difference: in the answer's files (anything outside the checks,
// the image's own modules and /usr) the pragmas that switch checking off
// (@ts-nocheck, @ts-ignore, @ts-expect-error) are neutralised before
// TypeScript reads them, so the group judges the answer's types, not its
// say-so. The checks' own files keep theirs (a consumer test may expect an
// error). The rest is TypeScript's own: the same program, diagnostics in
// tsc's --pretty false format, exit status 0 with none, 2 with some.
// compile.js runs the same check (main, with tsc's own copy of the
// compiler) for every typecheck group of a grade in one process.
"use strict";

const TRUSTED = ["/checks/", "/opt/evalctl/", "/usr/"];
// Same length, so every position (and so every diagnostic) stays where it was.
const PRAGMA = /@ts-(nocheck|ignore|expect-error)/gi;
const neutral = (text) => text.replace(PRAGMA, (m) => "@ts_" + m.slice(4));
const isAnswer = (file) => !TRUSTED.some((d) => file.startsWith(d));

// main checks the program of config with ts (the TypeScript module),
// writes the diagnostics with write and returns the exit status.
function main(ts, config, write) {
  const report = (diags) => {
    if (diags.length === 0) return 0;
    const fmt = { getCanonicalFileName: (f) => f, getCurrentDirectory: ts.sys.getCurrentDirectory, getNewLine: () => "\n" };
    write(ts.formatDiagnostics(diags, fmt));
    return 2;
  };
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => report([d]),
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(config, { noEmit: true }, host);
  if (!parsed) return 2;
  if (parsed.errors.length) return report(parsed.errors);
  const ch = ts.createCompilerHost(parsed.options);
  const readFile = ch.readFile.bind(ch);
  ch.readFile = (f) => {
    const text = readFile(f);
    return text !== undefined && isAnswer(ts.sys.resolvePath(f)) ? neutral(text) : text;
  };
  const getSourceFile = ch.getSourceFile.bind(ch);
  ch.getSourceFile = (f, lang, onError, fresh) => {
    if (!isAnswer(ts.sys.resolvePath(f))) return getSourceFile(f, lang, onError, fresh);
    const text = ch.readFile(f);
    return text === undefined ? undefined : ts.createSourceFile(f, text, lang, false);
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host: ch, projectReferences: parsed.projectReferences });
  return report(ts.getPreEmitDiagnostics(program));
}

module.exports = { main };

if (require.main === module) {
  const ts = require("/usr/share/nodejs/typescript");
  process.exitCode = main(ts, process.argv[2], (s) => process.stdout.write(s));
}
