// Computing: the inputs go to the Go code in the worker, and its result
// onto the page. At most one computation runs in the worker; edits made
// meanwhile are merged into the next one, so a slow schedule never queues
// up work.
import { call } from './calls.js';
import { drawCharts } from './charts.js';
import { $, setCommand } from './dom.js';
import { scheduleDownloads } from './downloads.js';
import { lang, t } from './i18n.js';
import { CLASS_FIELDS, FIELDS, readInputs, writeURL } from './inputs.js';
import { syncPreset } from './presets.js';
import { shedView } from './shed.js';
import { stormView } from './storm.js';

let last = null; // the last valid result
let running = null; // the request in the worker
let queued = null; // the newest request not yet sent
let idleWaiters = [];
let pendingTimer = 0;
let announceTimer = 0;

// lastResult returns the last valid result, or null.
export const lastResult = () => last;

// update computes the page for the inputs as they are now.
export function update() {
  const v = readInputs();
  writeURL(v);
  syncPreset(v);
  queued = { text: JSON.stringify(v), lang: lang(), t0: performance.now(), timeout: 'timeout' in v };
  clearTimeout(pendingTimer);
  // Mark the results as stale only when the answer takes a while, so
  // that quick edits do not flicker.
  pendingTimer = setTimeout(() => setPending(true), 120);
  document.body.dataset.busy = 'true';
  if (!running) send();
}

function send() {
  const req = queued;
  queued = null;
  running = req;
  call('Compute', req.text, req.lang).then((json) => {
    running = null;
    apply(JSON.parse(json), req);
    if (queued) send();
    else settle();
  }, (err) => {
    running = null;
    $('status').textContent = t('js.loadFailed') + err.message;
    settle();
  });
}

function settle() {
  clearTimeout(pendingTimer);
  setPending(false);
  document.body.dataset.busy = 'false';
  const w = idleWaiters;
  idleWaiters = [];
  for (const f of w) f();
}

// againIdle resolves when the page shows the result of the last edit.
globalThis.againIdle = () => (running || queued ? new Promise((r) => idleWaiters.push(r)) : Promise.resolve());

function setPending(on) {
  $('calculator').classList.toggle('pending', on);
  $('pending').hidden = !on;
  $('summary').setAttribute('aria-busy', String(on));
}

function apply(r, req) {
  const errs = r.errors || [];
  showErrors(errs);
  if (errs.length === 0) {
    last = r;
    render(r, req);
    performance.measure('again-update', { start: req.t0 });
  }
  announce(r.announce || '');
}

// One live region, read out once typing pauses: the headline and the
// verdict (or the first error), not every number on every keystroke.
function announce(text) {
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    if ($('announce').textContent !== text) $('announce').textContent = text;
  }, 700);
}

function showErrors(errs) {
  const byField = {};
  for (const e of errs) byField[e.field] = e.text;
  for (const f of [...FIELDS, ...CLASS_FIELDS]) {
    const msg = byField[f] || '';
    $(f + '-err').textContent = msg;
    const inputs = f === 'jitter' ? [$('jitter'), $('factor')] : [$(f)];
    for (const el of inputs) {
      if (msg) el.setAttribute('aria-invalid', 'true');
      else el.removeAttribute('aria-invalid');
    }
  }
  const other = errs.filter((e) => !FIELDS.includes(e.field) && !CLASS_FIELDS.includes(e.field)).map((e) => e.text);
  $('other-err').textContent = other.join(' ');
  const any = errs.length > 0;
  // Every result that no longer matches the inputs goes grey: the
  // headline and verdict, the details, the charts, the table and the code.
  $('calculator').classList.toggle('invalid', any);
  if (any) {
    stormView.cancel();
    shedView.cancel();
  }
  $('status').classList.remove('loading');
  $('status').textContent = !any ? '' : last ? t('js.invalid') : t('js.invalidNone');
}

function render(r, req) {
  const s = r.summary;
  document.body.classList.add('computed');
  $('worst').textContent = s.worst;
  $('mean').textContent = s.mean;
  $('mean-est').hidden = !s.meanEstimated;
  $('mean-est').title = t('js.estimated');
  const vd = s.verdict;
  const verdict = $('verdict');
  verdict.className = 'verdict' + (vd ? (vd.fits ? ' fits' : ' misses') : '');
  verdict.textContent = s.noRetries || (vd ? vd.headline : t('js.noDeadline'));
  if (s.noRetries && vd) verdict.textContent = vd.headline;
  $('verdict-detail').textContent = vd ? vd.detail : '';
  $('t-min').textContent = s.shortest;
  $('t-p50').textContent = s.p50;
  $('t-p90').textContent = s.p90;
  $('t-p99').textContent = s.p99;
  for (const id of ['t-p50', 't-p90', 't-p99']) $(id).classList.toggle('est', s.percentilesEstimated);
  $('estimated').textContent = s.estimate ? '* ' + s.estimate : '';
  $('attempts-note').textContent = s.attempts || '';
  for (const b of document.querySelectorAll('[data-solve]')) b.disabled = !vd;
  // Table.
  const body = document.createDocumentFragment();
  for (const row of r.rows || []) {
    const tr = document.createElement('tr');
    const cells = [String(row.retry), row.delay, row.totalMax, row.min, row.mean, row.max];
    cells.forEach((c, i) => {
      const td = document.createElement(i === 0 ? 'th' : 'td');
      if (i === 0) td.scope = 'row';
      td.textContent = c;
      if (i === 1 && row.capped) {
        const m = document.createElement('span');
        m.className = 'capped-mark';
        m.textContent = t('js.capped');
        td.prepend(m, ' ');
      }
      tr.append(td);
    });
    body.append(tr);
  }
  $('rows').replaceChildren(body);
  $('more-rows').textContent = r.moreRows || '';
  renderClasses(r.classes || []);
  // Charts, code and downloads.
  drawCharts(r);
  setCommand($('command'), r.command);
  $('command-note').textContent = req.timeout ? t('js.commandNote') : '';
  $('snippet').textContent = r.snippet;
  scheduleDownloads(req.text);
  stormView.schedule();
  shedView.schedule();
}

// renderClasses shows the schedule of each class of failure the per-class
// inputs give: its totals in a sentence and a small table.
function renderClasses(classes) {
  $('classes-out').hidden = classes.length === 0;
  $('class-list').replaceChildren(...classes.map((c) => {
    const box = document.createElement('div');
    box.className = 'class-box';
    const h = document.createElement('h4');
    h.textContent = c.title;
    const p = document.createElement('p');
    p.className = 'class-totals';
    p.textContent = c.totals + (c.note ? ' ' + c.note : '');
    box.append(h, p);
    if (c.rows.length > 0) {
      const table = document.createElement('table');
      const head = table.createTHead().insertRow();
      for (const k of ['js.axisRetry', 'js.axisDelay', 'js.axisStart']) {
        const th = document.createElement('th');
        th.scope = 'col';
        th.textContent = t(k);
        head.append(th);
      }
      const body = table.createTBody();
      for (const row of c.rows) {
        const tr = body.insertRow();
        const th = document.createElement('th');
        th.scope = 'row';
        th.textContent = String(row.retry);
        tr.append(th);
        for (const text of [row.delay, row.totalMax]) tr.insertCell().textContent = text;
      }
      const wrap = document.createElement('div');
      wrap.className = 'table-wrap';
      wrap.append(table);
      box.append(wrap);
    }
    return box;
  }));
}
