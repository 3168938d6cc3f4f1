// The calculator page. All maths and all messages come from Go compiled to
// WebAssembly (again.wasm, see web/wasm), which runs in a Web Worker
// (worker.js, reached through calls.js) so that typing never waits for
// it; every other string comes from the same Go catalogue, through
// text.js. These modules move text between the inputs, the URL, the
// worker and the page, and draw the charts from the numbers and labels Go
// gives them. The page makes no network request after loading.
//
// This module starts the page and wires its controls; compute.js puts the
// results on it; charts.js, storm.js, shed.js (both through view.js) and
// svg.js draw; inputs.js and presets.js hold the form; i18n.js the
// language.
import { call } from './calls.js';
import { drawCharts } from './charts.js';
import { lastResult, update } from './compute.js';
import { $, reducedMotion } from './dom.js';
import { wireDownloads } from './downloads.js';
import { lang, pickLanguage, setLang, t } from './i18n.js';
import { CLASS_FIELDS, FACTORED, FIELDS, POLICY, fieldDefault, jitterHint, nameOptions, placeholders, readInputs, readURL, setDefaults, setField, setFields, writeURL } from './inputs.js';
import { fillPresets, preset, presetNote } from './presets.js';
import { shedView } from './shed.js';
import { stormView } from './storm.js';

let ready = false; // the Go code has started
let solved = null; // the last solve: its parameter and the inputs before it

function setLanguage(l, chosen) {
  setLang(l, chosen);
  document.documentElement.lang = l;
  document.title = t('js.title');
  $('lang-en').setAttribute('aria-pressed', String(l === 'en'));
  $('lang-ru').setAttribute('aria-pressed', String(l === 'ru'));
  fillPresets();
  nameOptions();
  if (ready) {
    placeholders();
    update(); // Go writes every number and message in the new language
    if (solved) solve(solved.param, solved.inputs);
  }
}

async function solve(param, inputs) {
  const before = inputs || JSON.stringify(readInputs());
  const r = JSON.parse(await call('Solve', before, param, lang()));
  if (!inputs && !r.error) {
    setField(r.field, r.value);
    update();
  }
  solved = { param, inputs: before };
  $('solve-msg').textContent = r.error || r.note;
}

function wire() {
  $('inputs').addEventListener('submit', (e) => e.preventDefault());
  $('inputs').addEventListener('input', (e) => {
    if (e.target.id === 'preset') return;
    if (e.target.id === 'jitter') {
      $('factor-box').hidden = !FACTORED.includes($('jitter').value);
      jitterHint();
    }
    solved = null;
    $('solve-msg').textContent = '';
    update();
  });
  $('preset').addEventListener('change', () => {
    const p = preset($('preset').value);
    presetNote();
    if (!p) return;
    setFields(POLICY, p.v);
    // A preset is a whole policy: its classes of failure, or none.
    for (const f of CLASS_FIELDS) $(f).value = p.c?.[f] ?? '';
    if (p.c) $('classes').open = true;
    update();
  });
  $('target').addEventListener('change', update);
  $('clients').addEventListener('input', () => { writeURL(readInputs()); stormView.schedule(); });
  $('shed').addEventListener('input', () => { writeURL(readInputs()); shedView.schedule(); });
  for (const b of document.querySelectorAll('[data-solve]')) b.addEventListener('click', () => solve(b.dataset.solve));
  for (const l of ['en', 'ru']) $('lang-' + l).addEventListener('click', () => { setLanguage(l, true); writeURL(readInputs()); });
  for (const a of document.querySelectorAll('a.example')) {
    a.addEventListener('click', (e) => {
      e.preventDefault();
      setFields(FIELDS, Object.fromEntries(new URLSearchParams(a.getAttribute('href').slice(1))));
      update();
      $('calculator').scrollIntoView({ behavior: reducedMotion() ? 'auto' : 'smooth' });
      $('initial').focus({ preventScroll: true });
    });
  }
  let resizing = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(() => {
      if (lastResult()) drawCharts(lastResult());
      stormView.redraw();
      shedView.redraw();
    });
  });
  wireDownloads();
  $('copy-go').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('snippet').textContent);
      $('copy-msg').textContent = t('js.copied');
    } catch (e) {
      const range = document.createRange();
      range.selectNodeContents($('snippet'));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      $('copy-msg').textContent = t('js.copyFailed');
    }
  });
}

async function main() {
  const { v, params } = readURL();
  setLanguage(pickLanguage(params));
  for (const f of Object.keys(v)) setField(f, v[f]);
  jitterHint();
  wire();
  try {
    // An empty field means the default, as an absent flag of again calc does.
    setDefaults(JSON.parse(await call('Defaults')));
  } catch (e) {
    $('status').textContent = t('js.loadFailed') + e.message;
    return;
  }
  ready = true;
  placeholders();
  for (const f of FIELDS) if (!(f in v)) setField(f, fieldDefault(f));
  jitterHint();
  $('status').textContent = '';
  update();
  await globalThis.againIdle();
  performance.mark('again-first-table');
  document.body.dataset.ready = 'true';
}

main();
