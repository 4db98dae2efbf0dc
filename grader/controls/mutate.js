// Make mutants of a TypeScript (or JavaScript) reference solution for
// evalctl's control generator: the counterpart of mutate.py.
//
// Reads {"path": "source", ...} as JSON on stdin and writes a JSON list of
// mutants, each {"file", "line", "op", "desc", "source"}: the whole file with
// one change. Run in the sandbox image (node 18), with the image's own
// TypeScript compiler API (require("typescript")) to parse, so every site is
// a real syntax node; the change is spliced into the original text, which
// keeps the rest of the file (comments, layout) as written.
//
// Operators: comparison swaps and boundary shifts (< to <=, === to !==),
// arithmetic and logical operator swaps (&& to ||, ?? to ||), integer
// literals off by one, true and false swapped, `!` dropped, a statement
// dropped, an if's condition forced false, a return's value replaced by
// undefined. Mutants equal to the original or to an earlier mutant, or that
// no longer parse, are left out.
"use strict";
const ts = require("typescript");
const fs = require("fs");

const K = ts.SyntaxKind;
const CMP = {
  [K.LessThanToken]: ["<=", ">="], [K.LessThanEqualsToken]: ["<", ">"],
  [K.GreaterThanToken]: [">=", "<="], [K.GreaterThanEqualsToken]: [">", "<"],
  [K.EqualsEqualsEqualsToken]: ["!=="], [K.ExclamationEqualsEqualsToken]: ["==="],
  [K.EqualsEqualsToken]: ["!="], [K.ExclamationEqualsToken]: ["=="],
};
const ARITH = {
  [K.PlusToken]: ["-"], [K.MinusToken]: ["+"], [K.AsteriskToken]: ["+"], [K.SlashToken]: ["*"],
  [K.PercentToken]: ["/"], [K.PlusEqualsToken]: ["-="], [K.MinusEqualsToken]: ["+="],
};
const LOGIC = {
  [K.AmpersandAmpersandToken]: ["||"], [K.BarBarToken]: ["&&"], [K.QuestionQuestionToken]: ["||"],
};
// Statements whose drop is a plausible mistake (declarations, imports and
// exports are not: dropping them breaks the file, not the behaviour).
const DROP = new Set([K.ExpressionStatement, K.IfStatement, K.ThrowStatement, K.BreakStatement,
  K.ContinueStatement, K.ForStatement, K.ForOfStatement, K.ForInStatement, K.WhileStatement, K.DoStatement, K.TryStatement]);

function sites(sf) {
  const out = [];
  const text = sf.text;
  const line = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const add = (node, start, end, repl, op, desc) => out.push({ start, end, repl, op, desc, line: line(node.getStart(sf)) });
  function visit(node) {
    if (ts.isBinaryExpression(node)) {
      const t = node.operatorToken;
      const tok = t.getText(sf);
      for (const [table, op] of [[CMP, "compare"], [ARITH, "arith"], [LOGIC, "bool"]]) {
        for (const repl of table[t.kind] || []) {
          add(node, t.getStart(sf), t.end, repl, op, `${tok} to ${repl}`);
        }
      }
    } else if (ts.isNumericLiteral(node) && /^\d+$/.test(node.text)) {
      const n = Number(node.text);
      // An enum member's or a type's literal is not behaviour a test sees.
      if (!ts.isLiteralTypeNode(node.parent)) {
        add(node, node.getStart(sf), node.end, String(n + 1), "constant", `${n} to ${n + 1}`);
        if (n > 0) add(node, node.getStart(sf), node.end, String(n - 1), "constant", `${n} to ${n - 1}`);
      }
    } else if (node.kind === K.TrueKeyword || node.kind === K.FalseKeyword) {
      if (!ts.isLiteralTypeNode(node.parent)) {
        const v = node.kind === K.TrueKeyword;
        add(node, node.getStart(sf), node.end, String(!v), "constant", `${v} to ${!v}`);
      }
    } else if (ts.isPrefixUnaryExpression(node) && node.operator === K.ExclamationToken) {
      add(node, node.getStart(sf), node.operand.getStart(sf), "", "not", "drop !");
    } else if (ts.isIfStatement(node)) {
      add(node, node.expression.getStart(sf), node.expression.end, "false", "branch", "if condition forced false");
    } else if (ts.isReturnStatement(node) && node.expression && node.expression.kind !== K.UndefinedKeyword) {
      add(node, node.expression.getStart(sf), node.expression.end, "undefined as any", "return", "return undefined instead");
    }
    const isSuper = ts.isExpressionStatement(node) && ts.isCallExpression(node.expression) && node.expression.expression.kind === K.SuperKeyword;
    if (DROP.has(node.kind) && !isSuper && (ts.isBlock(node.parent) || ts.isSourceFile(node.parent) || ts.isCaseClause(node.parent) || ts.isDefaultClause(node.parent))) {
      const first = text.slice(node.getStart(sf), node.end).split("\n")[0].trim().slice(0, 60);
      add(node, node.getStart(sf), node.end, ";", "drop", "drop statement: " + first);
    }
    ts.forEachChild(node, visit);
  }
  visit(sf);
  return out;
}

function parses(file, src) {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.ES2020, true);
  return sf.parseDiagnostics.length === 0;
}

function main() {
  const files = JSON.parse(fs.readFileSync(0, "utf8"));
  const out = [];
  for (const file of Object.keys(files).sort()) {
    const src = files[file];
    const sf = ts.createSourceFile(file, src, ts.ScriptTarget.ES2020, true);
    if (sf.parseDiagnostics.length > 0) {
      const d = sf.parseDiagnostics[0];
      process.stderr.write(`${file}:${sf.getLineAndCharacterOfPosition(d.start).line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}\n`);
      process.exit(2);
    }
    const seen = new Set([src]);
    for (const s of sites(sf)) {
      let repl = s.repl;
      // In a .js file, "undefined as any" is not JavaScript.
      if (repl === "undefined as any" && !/\.tsx?$/.test(file)) repl = "undefined";
      const mutated = src.slice(0, s.start) + repl + src.slice(s.end);
      if (seen.has(mutated) || !parses(file, mutated)) continue;
      seen.add(mutated);
      out.push({ file, line: s.line, op: s.op, desc: s.desc, source: mutated });
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main();
