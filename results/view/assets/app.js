// evalctl view: a page that reads the server's JSON. Every figure shown is
// a value of the report JSON ('evalctl report --format json') or of an
// attempt's record; the page formats numbers, it never computes them. Each
// figure keeps its exact value in data-value, so tests (and curious people)
// can compare it with the JSON.
'use strict';

const app = document.getElementById('app');
const crumbs = document.getElementById('crumbs');
const live = document.getElementById('live');
const params = new URLSearchParams(location.search);
const POLL_MS = Number(params.get('poll')) > 0 ? Number(params.get('poll')) : 2000;
let generation = 0; // bumped on every navigation: stale polls stop
let pollTimer = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-') || k === 'href' || k === 'id' || k === 'title' || k === 'open') e.setAttribute(k, v === true ? '' : String(v));
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// render shows a page's parts, leaving out the absent ones.
function render(...parts) {
  app.replaceChildren(...parts.flat().filter((p) => p !== null && p !== undefined && p !== false));
}

function svgEl(tag, attrs, ...children) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function isNum(v) { return typeof v === 'number' && isFinite(v); }
function fmt(v, prec) { return isNum(v) ? v.toFixed(prec) : '-'; }
function pct(v) { return isNum(v) ? (v * 100).toFixed(1) + '%' : '-'; }

// A figure: its text, and its exact value for anyone checking it.
function fig(field, v, text, cls) {
  return el('td', { class: cls || 'num', 'data-field': field, 'data-value': v === null || v === undefined ? 'null' : String(v) }, text);
}

function rateCell(field, r) {
  const t = r.of === 0 ? 'no denominator (0 scored)'
    : `${r.count}/${r.of} ${pct(r.rate)} [${pct(r.wilson_low)}, ${pct(r.wilson_high)}]`;
  return el('td', { class: 'num', 'data-field': field, 'data-value': r.rate === null ? 'null' : String(r.rate), 'data-count': r.count, 'data-of': r.of }, t);
}

function link(href, text) { return el('a', { href }, text); }
function enc(s) { return encodeURIComponent(s); }

function setCrumbs(...items) {
  crumbs.replaceChildren(...items.flatMap((x, i) => (i ? [' › ', x] : [x])));
}

async function getJSON(url, etag) {
  const headers = etag ? { 'If-None-Match': etag } : {};
  const r = await fetch(url, { headers });
  if (r.status === 304) return { notModified: true, etag };
  const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return { body, etag: r.headers.get('ETag') };
}

function showError(err) {
  render(el('div', { class: 'err', id: 'error' }, String(err && err.message ? err.message : err)));
}

function stamp() {
  live.textContent = 'updated ' + new Date().toLocaleTimeString();
}

// ---- runs --------------------------------------------------------------

async function runsPage(gen) {
  setCrumbs('runs');
  document.title = 'runs · evalctl view';
  const { body: runs } = await getJSON('/api/runs');
  if (gen !== generation) return;
  const rows = runs.map((r) => el('tr', { 'data-run': r.id },
    el('td', {}, r.kind === 'cohort' ? el('input', { type: 'checkbox', class: 'pick', value: r.id, title: 'pool with other runs' }) : ''),
    el('td', {}, link(`#/run/${enc(r.id)}`, r.name)),
    el('td', { class: 'muted' }, r.id),
    el('td', {}, r.kind + (r.regrades ? ` +${r.regrades} regrade(s)` : '')),
    el('td', {}, r.created_at),
    el('td', { 'data-field': 'state' }, r.state || '-'),
    el('td', {}, (r.arms || []).join(', ') || '-'),
    fig('scored', r.scored, `${r.scored ?? '-'}/${r.planned ?? '-'}`),
    el('td', {}, r.suite_version || '-')));
  render(
    el('h1', {}, `Runs (${runs.length})`),
    runs.length === 0 ? el('p', { class: 'muted' }, 'No runs here.') :
      el('table', { id: 'runs' },
        el('thead', {}, el('tr', {}, ...['', 'name', 'id', 'kind', 'created', 'state', 'arms', 'scored/planned', 'suite'].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows)),
    runs.length > 1 ? el('p', {}, el('button', { id: 'compare', onclick: () => {
      const ids = [...document.querySelectorAll('input.pick:checked')].map((c) => c.value);
      if (ids.length) location.hash = `#/compare/${ids.map(enc).join(',')}`;
    } }, 'Pool the selected runs'), el('span', { class: 'muted' }, ' (as evalctl report RUN RUN... does; their arms are compared)')) : null);
  stamp();
  schedule(gen, () => (document.querySelector('input.pick:checked') ? Promise.resolve() : runsPage(gen)));
}

function schedule(gen, fn) {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(() => {
    if (gen === generation) fn().catch(showError);
  }, POLL_MS);
}

// ---- one run -----------------------------------------------------------

async function runPage(gen, id) {
  let etag = null;
  let arms = null;
  const poll = async () => {
    // The report, the run's state and (once) the arms' settings, at once.
    const [res, { body: s }, a] = await Promise.all([
      getJSON(`/api/runs/${enc(id)}/report`, etag),
      getJSON(`/api/runs/${enc(id)}`),
      arms ? Promise.resolve({ body: arms }) : getJSON(`/api/runs/${enc(id)}/arms`)]);
    if (gen !== generation) return;
    arms = a.body;
    setCrumbs(link('#/', 'runs'), s.name);
    document.title = `${s.name} · evalctl view`;
    if (!res.notModified) {
      etag = res.etag;
      renderRun(id, s, arms, res.body);
    }
    stamp();
    schedule(gen, poll);
  };
  await poll();
}

function renderRun(id, summary, armsInfo, rep) {
  const parts = [];
  parts.push(el('h1', { id: 'run-title' }, `${summary.name} `, el('span', { class: 'muted' }, `(${summary.kind}, ${summary.state || 'state unknown'})`)));
  parts.push(el('p', { class: 'muted' }, `run ${summary.id} · created ${summary.created_at} · suite ${summary.suite_version} · `,
    progressSpan(rep),
    rep.runs.length ? ` · outcomes under ${rep.runs.map((r) => r.graded_suite).join(', ')}` : '',
    ' · ', el('a', { href: `/runs/${enc(id)}/report.html`, id: 'html-report' }, 'HTML report')));
  for (const m of rep.mixed || []) parts.push(el('div', { class: 'warn' }, 'mixed: ' + m));
  // Warnings the report carries (overlap of attempts that share hardware,
  // and whatever else it flags) are shown as they are.
  for (const [k, v] of Object.entries(rep)) {
    if (!/warn|overlap/i.test(k) || v === null) continue;
    for (const w of Array.isArray(v) ? v : [v]) parts.push(el('div', { class: 'warn', 'data-warning': k }, `${k}: ${typeof w === 'string' ? w : JSON.stringify(w)}`));
  }
  for (const n of rep.notes || []) parts.push(el('div', { class: 'warn note' }, n));

  parts.push(el('h2', {}, 'Arms'));
  parts.push(armsTable(rep));
  parts.push(rateBars(rep));
  parts.push(speedBars(rep));
  parts.push(el('h2', {}, 'Arm settings and server identity'));
  parts.push(settingsTable(armsInfo));
  if ((rep.comparisons || []).length) {
    parts.push(el('h2', {}, `Against the baseline ${rep.baseline}`));
    parts.push(comparisonsTable(rep));
    parts.push(ratioBars(rep));
  }
  parts.push(el('h2', {}, 'Per case'));
  parts.push(el('p', { class: 'muted' }, 'functional and delivered per case and arm; a cell lists its attempts.'));
  parts.push(gridTable(`#/run/${enc(id)}`, rep));
  render(...parts);
}

// The run's scored and planned attempts, as the report counts them (the
// sum over arms of scored and of planned slots).
// The run's state as the report says it ("running, 7 of 18 attempts
// ended; ...", "stopped, resumable: ..."), then what is scored.
function progressSpan(rep) {
  let scored = 0, planned = 0;
  for (const a of rep.arms) { scored += a.scored; planned += a.attempts; }
  const states = rep.runs.filter((r) => r.progress).map((r) => (rep.runs.length > 1 ? `${r.name || r.id}: ` : '') + r.progress.words);
  const state = rep.runs.length === 1 && rep.runs[0].progress ? rep.runs[0].progress.state : '';
  return el('span', { id: 'progress', 'data-scored': scored, 'data-planned': planned, 'data-state': state },
    (states.length ? states.join(' · ') + ' · ' : '') + `${scored} of ${planned} attempts scored`);
}

// A pooled speed with its case bootstrap interval (when the report has one).
function speedCell(field, v, iv, mark) {
  const lo = iv ? iv.low : null, hi = iv ? iv.high : null;
  const text = fmt(v, 2) + (isNum(lo) && isNum(hi) ? ` [${fmt(lo, 2)}, ${fmt(hi, 2)}]` : '') + mark;
  return el('td', { class: 'num', 'data-field': field, 'data-value': v === null || v === undefined ? 'null' : String(v), 'data-low': String(lo ?? null), 'data-high': String(hi ?? null) }, text);
}

function armsTable(rep) {
  const head = ['arm', 'attempts', 'scored', 'functional', 'delivered', 'decode TPS', 'task TPS', 'decode gain', 'tokens', 'measured', 'median attempt s'];
  return el('table', { id: 'arms' },
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))),
    el('tbody', {}, rep.arms.map((a) => el('tr', { 'data-arm': a.arm },
      el('th', {}, a.arm + (a.arm === rep.baseline ? ' (baseline)' : '')),
      fig('attempts', a.attempts, String(a.attempts)),
      fig('scored', a.scored, String(a.scored)),
      rateCell('functional', a.functional),
      rateCell('delivered', a.delivered),
      speedCell('decode_tps', a.decode_tps, a.decode_tps_interval, a.timings_source && a.timings_source !== 'server' ? ` (${a.timings_source})` : ''),
      speedCell('task_output_tps', a.task_output_tps, a.task_output_tps_interval, ''),
      fig('decode_tps_gain_percent', a.decode_tps_gain_percent, isNum(a.decode_tps_gain_percent) ? (a.decode_tps_gain_percent >= 0 ? '+' : '') + a.decode_tps_gain_percent.toFixed(1) + '%' : '-'),
      fig('native_output_tokens', a.native_output_tokens, a.native_output_tokens ?? '-'),
      fig('measured', a.measured, `${a.measured}${a.unmeasured ? ` (+${a.unmeasured} unknown)` : ''}`),
      fig('median_attempt_seconds', a.median_attempt_seconds, fmt(a.median_attempt_seconds, 1))))));
}

function settingsTable(info) {
  const rows = (info.arms || []).map((a) => {
    const s = JSON.parse(JSON.stringify(a.settings || {}));
    const ep = a.endpoint || {};
    const samp = s.sampling ? Object.entries(s.sampling).map(([k, v]) => `${k} ${v}`).join(', ') : '';
    const bud = s.budgets ? Object.entries(s.budgets).map(([k, v]) => `${k} ${v}`).join(', ') : '';
    const reas = s.reasoning ? Object.entries(s.reasoning).map(([k, v]) => `${k} ${v}`).join(', ') : '';
    return el('tr', { 'data-arm': a.name },
      el('th', {}, a.name),
      el('td', {}, (s.endpoint && s.endpoint.model) || '-'),
      el('td', { 'data-field': 'build_info' }, ep.build_info || '-'),
      el('td', {}, ep.model_path || '-'),
      el('td', { class: 'num' }, ep.context_size ?? '-'),
      el('td', { class: 'num' }, s.max_tokens ?? '-'),
      el('td', {}, samp || 'server defaults'),
      el('td', {}, reas || '-'),
      el('td', {}, bud || '-'),
      el('td', {}, s.profile ? `${s.profile}${a.server ? ' · ' + a.server : ''}` : '-'));
  });
  return el('table', { id: 'settings' },
    el('thead', {}, el('tr', {}, ...['arm', 'model', 'server build', 'model path', 'context', 'max_tokens', 'sampling', 'reasoning', 'budgets', 'profile'].map((h) => el('th', {}, h)))),
    el('tbody', {}, rows));
}

function transitionCells(prefix, t) {
  return [
    fig(prefix + '.pairs', t.pairs, String(t.pairs)),
    fig(prefix + '.both_pass', t.both_pass, String(t.both_pass)),
    fig(prefix + '.both_fail', t.both_fail, String(t.both_fail)),
    fig(prefix + '.candidate_improves', t.candidate_improves, String(t.candidate_improves)),
    fig(prefix + '.candidate_regresses', t.candidate_regresses, String(t.candidate_regresses)),
    fig(prefix + '.mcnemar_exact_p', t.mcnemar_exact_p, fmt(t.mcnemar_exact_p, 3)),
  ];
}

function comparisonsTable(rep) {
  const th = (x) => el('th', {}, x);
  return el('table', { id: 'comparisons' },
    el('thead', {},
      el('tr', {}, th('candidate'), el('th', { colSpan: 6 }, 'functional transitions'), el('th', { colSpan: 6 }, 'delivered transitions'), el('th', { colSpan: 2 }, 'decode TPS ratio (paired bootstrap 95%)')),
      el('tr', {}, th(''), ...['pairs', 'both pass', 'both fail', 'improves', 'regresses', 'McNemar p'].map(th), ...['pairs', 'both pass', 'both fail', 'improves', 'regresses', 'McNemar p'].map(th), th('ratio [low, high]'), th('cases'))),
    el('tbody', {}, rep.comparisons.map((c) => el('tr', { 'data-candidate': c.candidate },
      el('th', {}, c.candidate),
      ...transitionCells('functional', c.functional),
      ...transitionCells('delivered', c.delivered),
      el('td', { class: 'num', 'data-field': 'decode_tps_ratio', 'data-value': String(c.decode_tps_ratio.ratio), 'data-low': String(c.decode_tps_ratio.low), 'data-high': String(c.decode_tps_ratio.high) },
        `${fmt(c.decode_tps_ratio.ratio, 3)} [${fmt(c.decode_tps_ratio.low, 3)}, ${fmt(c.decode_tps_ratio.high, 3)}]`),
      fig('decode_tps_ratio.cases', c.decode_tps_ratio.cases, String(c.decode_tps_ratio.cases))))));
}

// Horizontal bars with their interval; the axis runs over the data.
function barChart(id, title, items, lo, hi, fmtTick) {
  const W = 640, rowH = 26, left = 170, right = 20, top = 22;
  const H = top + items.length * rowH + 24;
  const x = (v) => left + ((v - lo) / (hi - lo)) * (W - left - right);
  const svg = svgEl('svg', { id, width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img' });
  svg.append(svgEl('text', { x: 4, y: 14, 'font-weight': 600 }, title));
  for (let i = 0; i <= 4; i++) {
    const v = lo + (i * (hi - lo)) / 4;
    svg.append(svgEl('line', { x1: x(v), x2: x(v), y1: top, y2: H - 20, stroke: '#e2e8f0' }));
    svg.append(svgEl('text', { x: x(v), y: H - 6, 'text-anchor': 'middle', fill: '#718096' }, fmtTick(v)));
  }
  items.forEach((it, i) => {
    const y = top + i * rowH;
    svg.append(svgEl('text', { x: left - 6, y: y + 16, 'text-anchor': 'end' }, it.label));
    if (!isNum(it.value)) {
      svg.append(svgEl('text', { x: left + 4, y: y + 16, fill: '#718096' }, 'no data'));
      return;
    }
    const base = Math.max(lo, Math.min(hi, it.base ?? lo));
    const v = Math.max(lo, Math.min(hi, it.value));
    svg.append(svgEl('rect', { x: Math.min(x(base), x(v)), y: y + 5, width: Math.max(1, Math.abs(x(v) - x(base))), height: 14, fill: it.colour || '#63b3ed' }));
    if (isNum(it.low) && isNum(it.high)) {
      const a = x(Math.max(lo, it.low)), b = x(Math.min(hi, it.high));
      svg.append(svgEl('line', { x1: a, x2: b, y1: y + 12, y2: y + 12, stroke: '#1a202c', 'stroke-width': 1.5, class: 'whisker' }));
      svg.append(svgEl('line', { x1: a, x2: a, y1: y + 7, y2: y + 17, stroke: '#1a202c' }));
      svg.append(svgEl('line', { x1: b, x2: b, y1: y + 7, y2: y + 17, stroke: '#1a202c' }));
    }
  });
  return svg;
}

function rateBars(rep) {
  const items = [];
  for (const a of rep.arms) {
    items.push({ label: `${a.arm} functional`, value: a.functional.rate, low: a.functional.wilson_low, high: a.functional.wilson_high, colour: '#68d391' });
    items.push({ label: `${a.arm} delivered`, value: a.delivered.rate, low: a.delivered.wilson_low, high: a.delivered.wilson_high, colour: '#4fd1c5' });
  }
  return el('div', {}, barChart('rate-chart', 'Success rates with Wilson 95% intervals', items, 0, 1, (v) => Math.round(v * 100) + '%'));
}

function speedBars(rep) {
  const items = [];
  for (const a of rep.arms) {
    const d = a.decode_tps_interval || {}, t = a.task_output_tps_interval || {};
    items.push({ label: `${a.arm} decode`, value: a.decode_tps, low: d.low, high: d.high, colour: '#4299e1' });
    items.push({ label: `${a.arm} task`, value: a.task_output_tps, low: t.low, high: t.high, colour: '#90cdf4' });
  }
  const hi = niceCeil(Math.max(1, ...items.flatMap((i) => [i.value, i.high]).filter(isNum)));
  return el('div', {}, barChart('speed-chart', 'Pooled decode and task-output TPS, 95% case bootstrap intervals', items, 0, hi, (v) => String(Math.round(v))));
}

function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function ratioBars(rep) {
  const cs = rep.comparisons.map((c) => c.decode_tps_ratio);
  const vals = cs.flatMap((r) => [r.ratio, r.low, r.high]).filter(isNum).concat([1]);
  const lo = Math.max(0, Math.floor(Math.min(...vals) * 10 - 1) / 10);
  const hi = Math.ceil(Math.max(...vals) * 10 + 1) / 10;
  const items = rep.comparisons.map((c) => ({ label: `${c.candidate} / ${c.baseline}`, value: c.decode_tps_ratio.ratio, low: c.decode_tps_ratio.low, high: c.decode_tps_ratio.high, base: 1, colour: '#90cdf4' }));
  return el('div', {}, barChart('ratio-chart', 'Decode TPS ratio to the baseline, paired bootstrap 95% interval (1 = equal)', items, lo, hi, (v) => v.toFixed(2)));
}

function cellColour(rate) {
  if (!isNum(rate)) return '#edf2f7';
  const r = Math.round(245 - 120 * rate), g = Math.round(180 + 60 * rate), b = Math.round(180 - 40 * rate);
  return `rgb(${r},${g},${b})`;
}

function gridTable(base, rep) {
  const arms = rep.arms.map((a) => a.arm);
  return el('table', { id: 'grid' },
    el('thead', {}, el('tr', {}, el('th', {}, 'case'), ...arms.map((a) => el('th', {}, a)))),
    el('tbody', {}, rep.cases.map((c) => el('tr', { 'data-case': c.case },
      el('th', {}, c.case),
      ...arms.map((a) => {
        const ca = c.arms.find((x) => x.arm === a);
        if (!ca) return el('td', { class: 'muted' }, '-');
        return el('td', { class: 'cell', 'data-arm': a, 'data-case': c.case, 'data-value': String(ca.functional.rate), style: `background:${cellColour(ca.functional.rate)}` },
          link(`${base}/cell/${enc(c.case)}/${enc(a)}`,
            `F ${ca.functional.count}/${ca.functional.of} · D ${ca.delivered.count}/${ca.delivered.of}` + (ca.unscored ? ` · ${ca.unscored} unscored` : '') + (ca.pending ? ` · ${ca.pending} pending` : '')));
      })))));
}

// ---- several runs pooled ----------------------------------------------

function reportURL(ids) {
  return ids.length === 1 ? `/api/runs/${enc(ids[0])}/report` : '/api/report?' + ids.map((i) => 'run=' + enc(i)).join('&');
}

async function comparePage(gen, ids) {
  let etag = null;
  const base = `#/compare/${ids.map(enc).join(',')}`;
  const poll = async () => {
    const res = await getJSON(reportURL(ids), etag);
    if (gen !== generation) return;
    setCrumbs(link('#/', 'runs'), `${ids.length} runs pooled`);
    document.title = `${ids.length} runs · evalctl view`;
    if (!res.notModified) {
      etag = res.etag;
      const rep = res.body;
      const names = rep.runs.map((r) => `${r.name || r.id} (${r.id})`).join(' + ');
      const parts = [el('h1', { id: 'run-title' }, 'Pooled: ' + names), el('p', { class: 'muted' }, progressSpan(rep))];
      for (const m of rep.mixed || []) parts.push(el('div', { class: 'warn' }, 'mixed: ' + m));
      for (const n of rep.notes || []) parts.push(el('div', { class: 'warn note' }, n));
      parts.push(el('h2', {}, 'Arms'), armsTable(rep), rateBars(rep), speedBars(rep));
      if ((rep.comparisons || []).length) parts.push(el('h2', {}, `Against the baseline ${rep.baseline}`), comparisonsTable(rep), ratioBars(rep));
      parts.push(el('h2', {}, 'Per case'), gridTable(base, rep));
      render(...parts);
    }
    stamp();
    schedule(gen, poll);
  };
  await poll();
}

// ---- one cell: the attempts of a case under an arm ---------------------

async function cellPage(gen, ids, base, kase, arm) {
  const { body: rep } = await getJSON(reportURL(ids));
  if (gen !== generation) return;
  setCrumbs(link('#/', 'runs'), link(base, ids.length === 1 ? (rep.runs[0] && rep.runs[0].name) || ids[0] : `${ids.length} runs pooled`), `${kase} · ${arm}`);
  const c = rep.cases.find((x) => x.case === kase);
  const ca = c && c.arms.find((x) => x.arm === arm);
  if (!ca) throw new Error(`no case ${kase} under arm ${arm} in this run`);
  const b = (v) => (v === null || v === undefined ? 'null' : String(v));
  render(
    el('h1', {}, `${kase} under ${arm}`),
    el('table', { id: 'cell-stats' }, el('tbody', {},
      el('tr', {}, el('th', {}, 'functional'), rateCell('functional', ca.functional)),
      el('tr', {}, el('th', {}, 'delivered'), rateCell('delivered', ca.delivered)),
      el('tr', {}, el('th', {}, 'decode TPS'), fig('decode_tps', ca.decode_tps, fmt(ca.decode_tps, 2))))),
    el('table', { id: 'attempts' },
      el('thead', {}, el('tr', {}, ...['repeat', 'status', 'functional', 'delivered', 'attempt'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ca.attempt_outcomes.map((a) => el('tr', { 'data-attempt': a.attempt_id },
        el('td', {}, a.repeat), el('td', {}, a.status),
        el('td', { 'data-value': b(a.functional) }, b(a.functional)), el('td', { 'data-value': b(a.delivered) }, b(a.delivered)),
        el('td', {}, link(`#/run/${enc(a.run_id)}/attempt/${enc(a.attempt_id)}`, a.attempt_id)))))));
  stamp();
}

// ---- one attempt -------------------------------------------------------

function cut(text, limit) {
  if (text.length <= limit) return el('pre', {}, text);
  return el('div', {}, el('pre', {}, text.slice(0, limit)),
    el('details', {}, el('summary', {}, `cut: ${text.length} characters in all, the first ${limit} shown; open for the rest`), el('pre', {}, text.slice(limit))));
}

function numOr(v, prec) { return isNum(v) ? (prec === undefined ? String(v) : v.toFixed(prec)) : 'unknown'; }

function responseEvent(e) {
  const r = e.response;
  const t = r.timings || {};
  const tokens = isNum(t.predicted_n) ? t.predicted_n : (r.usage ? r.usage.completion_tokens : null);
  const decode = isNum(t.predicted_ms) ? t.predicted_ms / 1000 : null;
  const rate = isNum(tokens) && isNum(decode) && decode > 0 ? tokens / decode : null;
  const parts = [el('span', { class: 'tag' }, `response ${e.seq}`),
    `finish ${r.finish_reason || '-'} · ${numOr(tokens)} tokens in ${numOr(decode, 3)} s decode (${numOr(rate, 1)} tok/s)`,
    isNum(t.prompt_n) ? ` · prompt ${t.prompt_n}${isNum(t.cache_n) ? ` (+${t.cache_n} cached)` : ''}` : '',
    isNum(t.draft_n) && isNum(t.draft_n_accepted) ? ` · draft ${t.draft_n_accepted}/${t.draft_n} accepted` : ''];
  const body = [el('div', {}, ...parts)];
  if (r.reasoning_content) body.push(el('details', { class: 'reasoning' }, el('summary', {}, `reasoning (${r.reasoning_content.length} characters)`), el('pre', {}, r.reasoning_content)));
  if (r.content) body.push(cut(r.content, 4000));
  for (const c of r.tool_calls || []) body.push(el('div', { class: 'call' }, '→ ', el('b', {}, c.name), ' ', el('code', {}, c.arguments.length > 400 ? c.arguments.slice(0, 400) + `… (${c.arguments.length} characters)` : c.arguments)));
  return el('div', { class: 'event response' }, ...body);
}

function toolEvent(e) {
  const t = e.tool;
  let status = t.skipped ? `skipped: ${t.skipped}` : t.timed_out ? 'timed out' : isNum(t.exit_code) ? `exit ${t.exit_code}` : '';
  if (t.error) status += ' (error)';
  return el('div', { class: 'event tool' }, el('div', {}, el('span', { class: 'tag' }, `tool ${t.name}`), `${status} · ${t.seconds.toFixed(2)} s · result ${t.result.length} characters`),
    el('div', {}, el('code', {}, t.arguments.length > 400 ? t.arguments.slice(0, 400) + '…' : t.arguments)), t.skipped ? null : cut(t.result, 4000));
}

function transcript(events) {
  const out = [];
  let phase = 0;
  for (const e of events || []) {
    if (e.phase && e.phase !== phase) { phase = e.phase; out.push(el('h3', {}, `Phase ${phase}`)); }
    switch (e.kind) {
      case 'phase_start':
        if (e.message) out.push(el('div', { class: 'event user' }, el('span', { class: 'tag' }, 'user'), cut(e.message.content || '', 4000)));
        break;
      case 'request':
        out.push(el('div', { class: 'muted' }, `request ${e.seq}: ${e.message_count} messages, max_tokens ${e.max_tokens}` + (e.setup ? `, model ${e.setup.model}, ${e.setup.tools.length} tools` : '')));
        break;
      case 'response': if (e.response) out.push(responseEvent(e)); break;
      case 'model_error': out.push(el('div', { class: 'event error' }, el('span', { class: 'tag' }, `model error ${e.seq}`), `${e.error_kind}: ${e.error}`)); break;
      case 'tool': if (e.tool) out.push(toolEvent(e)); break;
      case 'phase_end':
        if (e.turn) {
          const t = e.turn;
          out.push(el('div', { class: 'event end' }, el('span', { class: 'tag' }, `end of phase ${t.phase}`),
            `${t.termination} after ${t.seconds.toFixed(1)} s, ${t.responses} responses, agent finished ${t.agent_finished}, final text ${t.final_text}`,
            t.last_test ? `, last test ${t.last_test.passed ? 'passed' : 'failed'}` : ', no test run', t.error ? ` · ${t.error}` : ''));
        }
        break;
    }
  }
  if (!out.length) out.push(el('p', { class: 'muted' }, 'No transcript.'));
  return out;
}

function gradesView(d) {
  const out = [];
  for (const sg of d.grades || []) {
    sg.phases.forEach((g, i) => {
      if (!g) { out.push(el('h3', {}, `${sg.suite}, phase ${i + 1}: no grade`)); return; }
      out.push(el('h3', {}, `${sg.suite}, phase ${g.phase}: `, el('span', { class: g.solved ? 'ok' : 'bad', 'data-field': 'solved' }, g.solved ? 'solved' : 'not solved'),
        ` (protected changes ${g.protected_changes_count}, missing starter files ${g.missing_starter_files_count})`));
      const rows = g.groups.map((gr) => el('tr', { 'data-group': gr.name },
        el('th', {}, gr.name + (gr.required ? '' : ' (not required)')),
        el('td', { class: gr.success ? 'ok' : 'bad' }, gr.success ? 'ok' : 'FAILED'),
        el('td', { class: 'num' }, `${gr.passed}/${gr.total}`),
        el('td', {}, (gr.failed_tests || []).join(', ')),
        el('td', {}, gr.success || !gr.output ? '' : cut(gr.output, 3000))));
      out.push(el('table', { class: 'groups' }, el('thead', {}, el('tr', {}, ...['group', 'result', 'passed', 'failing tests', 'output'].map((h) => el('th', {}, h)))), el('tbody', {}, rows)));
    });
  }
  if (!out.length) out.push(el('p', { class: 'muted' }, 'No grades.'));
  return out;
}

function diffView(d) {
  if (d.diff_note) return [el('p', { class: 'muted' }, d.diff_note)];
  if (!d.diff || !d.diff.length) return [el('p', { class: 'muted' }, 'No change against the starter.')];
  return d.diff.map((f) => {
    if (f.binary) return el('div', {}, `${f.status} ${f.path} (binary)`);
    const pre = el('pre', { class: 'diff' });
    for (const line of f.unified.split('\n')) {
      const cls = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
      pre.append(el('span', { class: cls }, line + '\n'));
    }
    return el('div', { 'data-file': f.path }, el('b', {}, `${f.status} ${f.path}`), pre);
  });
}

async function attemptPage(gen, id, aid) {
  const { body: d } = await getJSON(`/api/runs/${enc(id)}/attempts/${enc(aid)}`);
  if (gen !== generation) return;
  const a = d.attempt;
  setCrumbs(link('#/', 'runs'), link(`#/run/${enc(id)}`, d.run.name || d.run.id), link(`#/run/${enc(id)}/cell/${enc(a.case)}/${enc(a.arm)}`, `${a.case} · ${a.arm}`), a.repeat);
  document.title = `${a.arm} ${a.case} ${a.repeat} · evalctl view`;
  const m = a.measurements;
  const dec = m && isNum(m.decode_seconds) && isNum(m.native_output_tokens) && m.decode_seconds > 0 ? m.native_output_tokens / m.decode_seconds : null;
  const outcomes = (d.outcomes || []).map((o) => el('li', { 'data-suite': o.suite },
    `${o.suite}: `, o.outcome ? el('span', {}, el('span', { class: o.outcome.functional ? 'ok' : 'bad', 'data-field': 'functional' }, `functional ${o.outcome.functional}`), ', ',
      el('span', { class: o.outcome.delivered ? 'ok' : 'bad', 'data-field': 'delivered' }, `delivered ${o.outcome.delivered}`)) : (o.ungraded ? 'ungraded' : 'unscored')));
  render(
    el('h1', { id: 'attempt-title' }, `${a.arm} · ${a.case} · ${a.repeat}`),
    el('p', { class: 'muted' }, `attempt ${a.id} · ${a.state}${a.replacement_of ? ' · replaces ' + a.replacement_of : ''} · seed ${a.seed} · slot ${a.slot}` +
      (a.endpoint ? ` · ${a.endpoint.base_url} model ${a.endpoint.model}${a.endpoint.build_info ? ' build ' + a.endpoint.build_info : ''}` : '')),
    a.error ? el('div', { class: 'err' }, a.error) : null,
    el('ul', { id: 'outcomes' }, outcomes),
    m ? el('table', { id: 'measurements' }, el('tbody', {}, el('tr', {},
      el('th', {}, 'output tokens'), fig('native_output_tokens', m.native_output_tokens, numOr(m.native_output_tokens)),
      el('th', {}, 'decode s'), fig('decode_seconds', m.decode_seconds, numOr(m.decode_seconds, 2)),
      el('th', {}, 'decode TPS'), el('td', { class: 'num' }, numOr(dec, 1)),
      el('th', {}, 'task s'), fig('task_seconds', m.task_seconds, numOr(m.task_seconds, 1)),
      el('th', {}, 'tool calls'), fig('tool_calls', m.tool_calls, `${m.tool_calls} (${m.tool_errors} errors)`),
      el('th', {}, 'timings'), el('td', {}, m.timings_source)))) : el('p', { class: 'muted' }, 'No measurements (the attempt was not scored).'),
    el('h2', {}, 'Conversation'), el('div', { id: 'transcript' }, transcript(d.transcript)),
    el('h2', {}, 'Grades'), el('div', { id: 'grades' }, gradesView(d)),
    el('h2', {}, 'Diff against the starter'), el('div', { id: 'diff' }, diffView(d)));
  stamp();
  if (a.state === 'running' || a.state === 'planned') schedule(gen, () => attemptPage(gen, id, aid));
}

// ---- routing -----------------------------------------------------------

function route() {
  generation++;
  clearTimeout(pollTimer);
  const gen = generation;
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map(decodeURIComponent);
  let page;
  if (parts.length === 0) page = runsPage(gen);
  else if (parts[0] === 'run' && parts.length === 2) page = runPage(gen, parts[1]);
  else if (parts[0] === 'run' && parts[2] === 'cell' && parts.length === 5) page = cellPage(gen, [parts[1]], `#/run/${enc(parts[1])}`, parts[3], parts[4]);
  else if (parts[0] === 'compare' && parts.length === 2) page = comparePage(gen, parts[1].split(','));
  else if (parts[0] === 'compare' && parts[2] === 'cell' && parts.length === 5) page = cellPage(gen, parts[1].split(','), `#/compare/${parts[1].split(',').map(enc).join(',')}`, parts[3], parts[4]);
  else if (parts[0] === 'run' && parts[2] === 'attempt' && parts.length === 4) page = attemptPage(gen, parts[1], parts[3]);
  else page = Promise.reject(new Error('no such page: ' + location.hash));
  page.catch((err) => { if (gen === generation) showError(err); });
}

window.addEventListener('hashchange', route);
route();
