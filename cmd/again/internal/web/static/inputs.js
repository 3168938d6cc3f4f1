// The calculator's inputs: reading and setting the fields, and keeping
// them in the URL, so that a link reproduces the schedule.
import { $ } from './dom.js';
import { lang, langChosen, t } from './i18n.js';

export const FIELDS = ['initial', 'multiplier', 'max', 'retries', 'jitter', 'deadline', 'timeout'];
// The policy's own fields: a preset sets these and keeps the caller's
// deadline and timeout, which belong to the caller, not to the policy.
export const POLICY = ['initial', 'multiplier', 'max', 'retries', 'jitter'];
// The per-class inputs, keyed as again calc's --on-overload and
// --on-transient take them: "on-overload.initial" (page.ClassFields).
export const CLASS_FIELDS = ['on-overload', 'on-transient'].flatMap((c) => POLICY.map((f) => c + '.' + f));
const JITTERS = ['none', 'full', 'equal', 'proportional', 'decorrelated', 'grpc'];
// The kinds that take a factor ("proportional:0.25").
export const FACTORED = ['proportional', 'grpc'];

let defaults = {}; // each field's default, from the Go code (againDefaults)
const extra = {}; // query parameters the page keeps but has no input for (seed)

// setDefaults keeps the fields' defaults: what an empty field stands for.
export function setDefaults(d) {
  defaults = d;
}

// fieldDefault returns field f's default text, or ''.
export const fieldDefault = (f) => defaults[f] ?? '';

function jitterText() {
  const kind = $('jitter').value;
  if (!FACTORED.includes(kind)) return kind;
  const f = $('factor').value.trim();
  return f === '' ? kind : kind + ':' + f;
}

// readInputs returns the inputs that are set, keyed as the URL and the Go
// code take them.
export function readInputs() {
  const v = {};
  for (const f of FIELDS) v[f] = f === 'jitter' ? jitterText() : $(f).value.trim();
  for (const f of FIELDS) if (v[f] === '') delete v[f];
  for (const f of CLASS_FIELDS) if ($(f).value.trim() !== '') v[f] = $(f).value.trim();
  if ($('target').value !== 'max') v.target = $('target').value;
  if ($('clients').value.trim() !== '') v.clients = $('clients').value.trim();
  if ($('shed').value.trim() !== '') v.shed = $('shed').value.trim();
  Object.assign(v, extra);
  return v;
}

function setJitter(text) {
  const sel = $('jitter');
  const [kind, factor] = text.split(/:(.*)/s);
  for (const o of [...sel.options]) if (o.dataset.unknown) o.remove();
  if (!JITTERS.includes(kind)) {
    // Keep what the user gave, so that the error names it.
    const o = new Option(text, text);
    o.dataset.unknown = '1';
    sel.add(o);
    sel.value = text;
    $('factor').value = '';
  } else {
    sel.value = kind;
    $('factor').value = FACTORED.includes(kind) ? (factor ?? '') : '';
  }
  $('factor-box').hidden = !FACTORED.includes(sel.value);
}

// setField sets field f's text.
export function setField(f, value) {
  if (f === 'jitter') setJitter(value);
  else $(f).value = value;
}

// setFields sets every field of fields to v's value, or its default.
export function setFields(fields, v) {
  for (const f of fields) setField(f, v[f] ?? defaults[f] ?? '');
  jitterHint();
}

export function writeURL(v) {
  const q = new URLSearchParams();
  for (const f of FIELDS) if (v[f] !== undefined && v[f] !== '') q.set(f, v[f]);
  for (const f of CLASS_FIELDS) if (v[f]) q.set(f, v[f]);
  if (v.target) q.set('target', v.target);
  if (v.clients) q.set('clients', v.clients);
  if (v.shed) q.set('shed', v.shed);
  for (const k of Object.keys(extra)) q.set(k, extra[k]);
  if (langChosen()) q.set('lang', lang());
  const s = '?' + q.toString();
  if (s !== location.search) history.replaceState(null, '', s);
}

// readURL sets the inputs without a field of their own from the URL and
// returns the fields' values it holds, and all its parameters.
export function readURL() {
  const params = new URLSearchParams(location.search);
  const v = {};
  for (const f of FIELDS) if (params.has(f)) v[f] = params.get(f);
  for (const f of CLASS_FIELDS) if (params.has(f)) $(f).value = params.get(f);
  // A link with per-class inputs opens their section.
  if (CLASS_FIELDS.some((f) => params.has(f))) $('classes').open = true;
  if (params.has('seed')) extra.seed = params.get('seed');
  if (params.has('clients')) $('clients').value = params.get('clients');
  if (params.has('shed')) $('shed').value = params.get('shed');
  if (params.get('target')) $('target').value = params.get('target') === 'p99' ? 'p99' : 'max';
  return { v, params };
}

// placeholders show what an empty field means: the default, or none.
export function placeholders() {
  for (const f of FIELDS) if (f !== 'jitter') $(f).placeholder = defaults[f] || t('js.none');
  // A class's empty field takes the policy field's default, as a key a
  // spec leaves out does.
  for (const f of CLASS_FIELDS) $(f).placeholder = defaults[f.split('.')[1]] ?? '';
}

// jitterHint says what the chosen jitter draws.
export function jitterHint() {
  const kind = $('jitter').value;
  $('jitter-hint').textContent = JITTERS.includes(kind) ? t('js.jitterHint.' + kind, { factor: t('js.factorDefault') }) : '';
}

// nameOptions names the choices of the select elements in the page's
// language, and writes the default jitter factor with its decimal sign.
export function nameOptions() {
  $('factor').placeholder = t('js.factorDefault');
  const sel = $('target');
  sel.options[0].textContent = t('js.targetMax');
  sel.options[1].textContent = t('js.targetP99');
  for (const o of $('jitter').options) if (!o.dataset.unknown) o.textContent = t('js.jitter.' + o.value);
  jitterHint();
}
