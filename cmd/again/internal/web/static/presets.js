// The preset menu: the calculator's presets (internal/calc, the same ones
// `again calc --preset` offers), each with a short note, its source and,
// for another library's or service's values, the date they were checked;
// the long notes fold away.
import { $ } from './dom.js';
import { t } from './i18n.js';
import { CLASS_FIELDS, POLICY } from './inputs.js';
import { PRESETS } from './text.js';

// preset returns the preset with the id, or undefined.
export const preset = (id) => PRESETS.find((p) => p.id === id);

// fillPresets lists the presets in the page's language, keeping the choice.
export function fillPresets() {
  const sel = $('preset');
  const cur = sel.value;
  sel.textContent = '';
  sel.add(new Option(t('js.custom'), ''));
  for (const p of PRESETS) sel.add(new Option(t(`preset.${p.id}.name`), p.id));
  sel.value = cur;
  presetNote();
}

export function presetNote() {
  const p = preset($('preset').value);
  const box = $('preset-note');
  box.replaceChildren();
  if (!p) return;
  const line = document.createElement('p');
  // The date goes inside the short note's sentence, before its full stop.
  const short = t(`preset.${p.id}.short`);
  line.append(p.asOf ? t('js.asOf', { text: short.replace(/\.$/, ''), date: p.asOf }) : short);
  if (p.src) {
    const a = document.createElement('a');
    a.href = p.src;
    a.rel = 'noreferrer noopener';
    a.textContent = t('js.source');
    line.append(' ', a);
  }
  const more = document.createElement('details');
  const sum = document.createElement('summary');
  sum.textContent = t('js.more');
  const body = document.createElement('p');
  body.textContent = t(`preset.${p.id}.more`);
  more.append(sum, body);
  box.append(line, more);
}

// syncPreset shows the preset whose policy the inputs hold, its classes of
// failure included, whatever the deadline and the timeout.
export function syncPreset(v) {
  const p = PRESETS.find((x) => POLICY.every((f) => (x.v[f] || '') === (v[f] || '')) &&
    CLASS_FIELDS.every((f) => (x.c?.[f] || '') === (v[f] || '')));
  if ($('preset').value !== (p ? p.id : '')) {
    $('preset').value = p ? p.id : '';
    presetNote();
  }
}
